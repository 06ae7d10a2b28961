"""Replays over zones whose recordings cover different periods."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from costsched.backtest.deadline import AvailabilityTrace
from costsched.model import InvalidInput
from costsched.service.deadline import deadline_backtest
from tests.costsched.backtest.deadline.traces import intervals, trace


def _unequal() -> AvailabilityTrace:
    """us-east-1a recorded for ticks 0..599, us-west-2b for ticks 300..899 (spot
    throughout each recording): a common period of ticks 300..599."""
    a = trace(["1" * 600], ["us-east-1a"])
    b = trace(["1" * 600], ["us-west-2b"])
    late = intervals(b).assign(start=lambda f: f["start"] + pd.Timedelta(seconds=300 * 60),
                               end=lambda f: f["end"] + pd.Timedelta(seconds=300 * 60))
    frame = pd.concat([intervals(a), late], ignore_index=True)
    return AvailabilityTrace.from_intervals(frame, 60, spot_price=1.0, on_demand_price=3.0)


def test_a_trace_knows_what_each_zone_covers() -> None:
    t = _unequal()
    assert t.ticks == 900
    assert t.covered[0, :600].all() and not t.covered[0, 600:].any()
    assert t.covered[1, 300:].all() and not t.covered[1, :300].any()
    # Not covered is not known to be without spot, but the matrix still says no spot there.
    assert not t.available[1, :300].any()
    assert t.start_ticks(120).tolist() == list(range(300, 481))
    assert "zones cover different periods" in t.coverage()
    assert "us-west-2b 2023-02-15 05:00..2023-02-15 15:00" in t.coverage()


def test_a_replay_starts_only_where_every_zone_is_covered_and_says_so() -> None:
    t = _unequal()
    result = deadline_backtest(None, trace=t, job_hours=1.0, deadline_hours=[2.0],
                               restart_minutes=[1.0], checkpoint_minutes=10, starts=5,
                               policies=["greedy", "spot-anywhere"])
    starts = result.results["start_tick"].unique()
    assert starts.min() == 300 and starts.max() == 600 - 120
    assert "zones cover different periods" in result.trace["coverage"]
    # With spot everywhere over the common period, nothing waits for the missing part:
    # greedy from either home zone runs on spot and meets every deadline.
    greedy = result.results[result.results["policy"] == "greedy"]
    assert greedy["met"].all()
    assert (greedy["on_demand_hours"] == 0).all()


def test_a_full_recording_changes_nothing() -> None:
    t = trace(["1" * 200, "0" * 200], ["us-east-1a", "us-west-2b"])
    assert t.covered is None and t.coverage() is None
    assert t.start_ticks(120).tolist() == list(range(81))
    again = AvailabilityTrace.from_intervals(intervals(t))
    assert again.covered is None


def test_no_common_period_is_refused_in_one_line() -> None:
    a = trace(["1" * 100], ["us-east-1a"])
    b = trace(["1" * 100], ["us-west-2b"])
    late = intervals(b).assign(start=lambda f: f["start"] + pd.Timedelta(seconds=100 * 60),
                               end=lambda f: f["end"] + pd.Timedelta(seconds=100 * 60))
    t = AvailabilityTrace.from_intervals(pd.concat([intervals(a), late], ignore_index=True), 60,
                                         spot_price=1.0, on_demand_price=3.0)
    with pytest.raises(InvalidInput, match="no period of that length is covered"):
        deadline_backtest(None, trace=t, job_hours=1.0, deadline_hours=[2.0],
                          restart_minutes=[1.0], starts=3, policies=["greedy"])
    assert np.array_equal(t.start_ticks(120), [])
