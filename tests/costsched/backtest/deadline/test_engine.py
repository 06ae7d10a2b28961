"""The replay engine's restart model: a planned stop keeps all progress (the job writes a
checkpoint on SIGTERM), a preemption goes back to the last periodic checkpoint."""

from __future__ import annotations

import numpy as np
import pytest

from costsched.backtest.deadline import DeadlineJob, simulate
from costsched.backtest.deadline.engine import past_spell_mean
from costsched.policies.deadline.base import PRIOR_SPELL
from tests.costsched.backtest.deadline.traces import Scripted, trace

TICK = 60
ZONES = ["us-east-1a", "us-east-1b"]  # one region: moves pay no egress


def finish_minutes(t, script: list[int], job: DeadlineJob) -> float:
    runs = simulate(t, Scripted(np.array([script])), job, np.array([0]), np.array([0]))
    return float(runs["finish_hours"].iloc[0] * 60)


def test_a_planned_move_keeps_the_work_since_the_last_checkpoint() -> None:
    # 10 minutes of work, checkpoints every 4; spot in zone 0 for ticks 0-6, then a move.
    job = DeadlineJob(10 / 60, 1.0, restart_minutes=1, checkpoint_minutes=4)
    t = trace(["1" * 80, "1" * 80], ZONES, TICK)
    moved = finish_minutes(t, [0] * 7 + [1] * 40, job)
    # Two restarts and the work, nothing done twice.
    assert moved == pytest.approx(job.work / 60 + 2 * job.restart_minutes)


def test_a_preemption_loses_the_work_since_the_last_checkpoint() -> None:
    job = DeadlineJob(10 / 60, 1.0, restart_minutes=1, checkpoint_minutes=4)
    t = trace(["1" * 7 + "0" * 73, "1" * 80], ZONES, TICK)
    preempted = finish_minutes(t, [0] * 7 + [1] * 40, job)
    # Six minutes of work done in zone 0 by tick 7; the checkpoint at 4 keeps 4 of them.
    assert preempted == pytest.approx(job.work / 60 + 2 * job.restart_minutes + 2)


def test_past_spell_mean_counts_only_spells_seen_to_end_by_the_tick() -> None:
    t = trace(["1101110"], ["us-east-1a"], TICK)
    mean = past_spell_mean(t.available, t.run_before * float(TICK))[0]
    assert mean[:2].tolist() == [PRIOR_SPELL] * 2  # the first spell ends at tick 2
    assert mean[2:6].tolist() == pytest.approx([(2 * TICK + PRIOR_SPELL) / 2] * 4)
    assert mean[6] == pytest.approx((2 * TICK + 3 * TICK + PRIOR_SPELL) / 3)
