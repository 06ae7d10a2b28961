"""The hindsight optimum: exact against brute force on tiny traces, below every policy."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from costsched.backtest.deadline import DeadlineJob, default_step, optimum, simulate
from costsched.policies.deadline import DEADLINE_POLICIES
from tests.costsched.backtest.deadline.traces import Scripted, trace

TICK = 60
ZONES = ["us-east-1a", "us-west-2a"]  # two regions: moves between them pay egress


def brute_force(t, job, start: int) -> float:
    """The least cost of every schedule of placements (nothing, spot or on-demand in each
    zone) over the ticks to the deadline that meets it."""
    ticks = math.ceil(job.deadline / TICK)
    choices = [-1, 0, 1, 2, 3]
    script = np.array(list(itertools.product(choices, repeat=ticks)), dtype=np.int64)
    runs = simulate(t, Scripted(script), job, np.full(len(script), start),
                    np.zeros(len(script), dtype=np.int64))
    met = runs[runs["met"]]
    return float(met["cost_usd"].min()) if len(met) else math.inf


@pytest.mark.parametrize(("restart", "seed"), [(0.5, 0), (0.5, 1), (1.5, 2), (1.5, 3)])
def test_optimum_equals_brute_force_on_tiny_traces(restart: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    t = trace(rng.random((2, 20)) < 0.6, ZONES, TICK)
    # 3 minutes of work due in 6 ticks; restarts of half a tick, or of 1.5 ticks (two
    # billed ticks); checkpoints every tick; a large checkpoint makes egress count.
    job = DeadlineJob(3 / 60, 6 / 60, restart_minutes=restart, checkpoint_minutes=1,
                      checkpoint_gb=20)
    for start in (0, 5):
        best = optimum(t, job, [start])[0]
        assert best == pytest.approx(brute_force(t, job, start), rel=1e-6)


def test_optimum_counts_lost_work_since_the_last_checkpoint() -> None:
    # Checkpoints every 2 ticks make a stop mid-interval lose a tick of work.
    t = trace(np.random.default_rng(7).random((2, 20)) < 0.6, ZONES, TICK)
    job = DeadlineJob(4 / 60, 7 / 60, restart_minutes=0.5, checkpoint_minutes=2)
    assert optimum(t, job, [2])[0] == pytest.approx(brute_force(t, job, 2), rel=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_optimum_is_at_most_every_policy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    zones = ["us-east-1a", "us-east-1b", "us-west-2a"]
    t = trace(np.repeat(rng.random((3, 40)) < 0.6, 5, axis=1), zones, TICK)
    job = DeadlineJob(1.0, 1.4, restart_minutes=3, checkpoint_minutes=10)
    starts = np.array([0, 30, 60])
    best = optimum(t, job, starts)
    assert np.isfinite(best).all()
    for name, cls in DEADLINE_POLICIES.items():
        runs = simulate(t, cls(), job, np.repeat(starts, 3), np.tile(np.arange(3), 3))
        assert (np.repeat(best, 3) <= runs["cost_usd"].to_numpy() + 1e-9).all(), name


def test_a_coarser_step_gives_a_lower_bound() -> None:
    t = trace(np.repeat(np.random.default_rng(3).random((2, 60)) < 0.5, 4, axis=1), ZONES,
              TICK)
    job = DeadlineJob(1.0, 1.5, restart_minutes=2.5, checkpoint_minutes=10)
    exact = optimum(t, job, [0, 40])
    coarse = optimum(t, job, [0, 40], step=60)
    assert (coarse <= exact + 1e-9).all()
    assert default_step(TICK, job) == math.gcd(60, 150, 600, 3600, 5400)
    assert default_step(TICK, job, max_states=10) == 60


def test_a_deadline_on_demand_cannot_meet_has_no_optimum() -> None:
    t = trace(["1" * 50], ["us-east-1a"], TICK)
    job = DeadlineJob(0.5, 0.5, restart_minutes=3, checkpoint_minutes=10)
    assert optimum(t, job, [0])[0] == math.inf
