"""The checkpoint interval costsched chooses: sqrt(2 x write time x mean time between
preemptions), clamped; parsed from job specs; used by the deadline replay."""

from __future__ import annotations

import math

import numpy as np
import pytest

from costsched import clouds
from costsched.jobspec import CheckpointSpec
from costsched.optimize import checkpoint_interval as ci
from costsched.service.deadline import deadline_backtest, trace_preemptions_per_hour
from tests.costsched.backtest.deadline.traces import trace


def test_the_first_order_optimum_and_its_clamps() -> None:
    # 1 GB at 1 Gbit/s: 8 s per write; one preemption every 2 h: sqrt(2 * 8 * 7200) s.
    assert ci.write_seconds(1.0) == 8.0
    assert ci.interval_minutes(1.0, 0.5) == pytest.approx(round(math.sqrt(2 * 8 * 7200)) / 60)
    # More preemptions, shorter interval; a bigger checkpoint, longer.
    assert ci.interval_minutes(1.0, 2.0) < ci.interval_minutes(1.0, 0.5)
    assert ci.interval_minutes(10.0, 0.5) > ci.interval_minutes(1.0, 0.5)
    assert ci.interval_minutes(0.0, 100.0) == ci.MIN_MINUTES  # tiny writes, constant loss
    assert ci.interval_minutes(1.0, 0.0) == ci.MAX_MINUTES  # never preempted
    assert ci.interval_minutes(100.0, 0.01) == ci.MAX_MINUTES


def test_a_job_spec_may_leave_the_interval_to_costsched() -> None:
    assert CheckpointSpec(interval_minutes="Auto").interval_minutes == "auto"
    assert CheckpointSpec(interval_minutes=15).interval_minutes == 15.0
    with pytest.raises(ValueError, match="expected minutes > 0 or 'auto'"):
        CheckpointSpec(interval_minutes="soon")
    with pytest.raises(ValueError, match="expected minutes > 0 or 'auto'"):
        CheckpointSpec(interval_minutes=0)
    auto = CheckpointSpec(interval_minutes="auto", size_gb=1.0)
    # On AWS only: AWS's default rate; anywhere: the most preempted cloud's (shorter).
    aws = ci.interval_minutes(1.0, clouds.default_preemption("aws").per_hour)
    assert ci.job_minutes(auto, ["aws"]) == aws
    assert ci.job_minutes(auto, regions=["us-east-1"]) == aws
    assert ci.job_minutes(auto) < aws
    assert ci.job_minutes(CheckpointSpec(interval_minutes=45), ["aws"]) == 45.0
    assert ci.launch_env(aws, True) == {"COSTSCHED_CHECKPOINT_MINUTES": f"{aws:g}"}
    assert ci.launch_env(45.0, False) == {}


def _two_hour_spells() -> object:
    """One zone: 2 h of spot, then 1 h without, over and over (60-s ticks): 0.5 spells
    end per hour of spot."""
    row = ("1" * 120 + "0" * 60) * 12
    return trace([row], ["us-east-1a"])


def test_the_replay_chooses_the_interval_from_a_known_preemption_rate() -> None:
    t = _two_hour_spells()
    assert trace_preemptions_per_hour(t) == pytest.approx(12 / 24, rel=0.05)  # 12 in 24 h
    common = dict(trace=t, job_hours=4.0, deadline_hours=[12.0], restart_minutes=[1.0],
                  checkpoint_gb=1.0, starts=3, policies=["greedy"])
    auto = deadline_backtest(None, checkpoint_minutes="auto", preemptions_per_hour=0.5,
                             **common)
    expected = round(math.sqrt(2 * 8 * 7200)) / 60  # 339 s: 5.65 min
    assert auto.trace["checkpoint_minutes"] == pytest.approx(expected)
    assert auto.trace["checkpoint_write_seconds"] == 8.0
    assert "auto: 5.65 min for 0.500 preemptions/h" in auto.trace["checkpoint_basis"]
    fixed = deadline_backtest(None, checkpoint_minutes=30, **common)
    assert fixed.trace["checkpoint_basis"] == "given"

    def greedy(result) -> float:  # noqa: ANN001
        runs = result.results[result.results["policy"] == "greedy"]
        assert runs["met"].all()
        return float(runs["cost_usd"].sum())

    # Greedy runs through every 2-hour spell; 30-minute checkpoints lose up to 30 min a
    # preemption, the chosen interval under 6 (each of its writes costs 8 s): it pays less.
    assert greedy(auto) < greedy(fixed)
    # The trace's own rate (hindsight) is the default.
    own = deadline_backtest(None, checkpoint_minutes="auto", **common)
    assert "the trace's own rate" in own.trace["checkpoint_basis"]
    assert np.isfinite(own.trace["checkpoint_minutes"])
