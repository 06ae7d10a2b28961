"""Deadline replays with a capacity block bought at each run's start: the policy runs the
job on the block while it is usable and plans the rest around it (`decide.booked`)."""

from __future__ import annotations

import numpy as np
import pytest

from costsched.backtest.deadline import DeadlineJob, simulate
from costsched.backtest.deadline.engine import BookedRun
from costsched.policies.deadline import deadline_policy
from tests.costsched.backtest.deadline.traces import ON_DEMAND, SPOT, trace

TICK = 360  # six minutes
ZONES = ["us-east-1a", "us-east-1b"]


def _with_block(rows: list[str], job: DeadlineJob, block: BookedRun, policy: str = "greedy"):
    t, index = trace(rows, ZONES, TICK).with_booked_zone("us-east-1c", "us-east-1")
    assert index == 2 and t.zones[2] == "us-east-1c (booked)"
    booked = BookedRun(index, block.start_hours, block.hours, block.upfront_usd)
    out = simulate(t, deadline_policy(policy), job, np.array([0]), np.array([0]),
                   booked=booked)
    return out.iloc[0]


def test_a_block_that_holds_the_job_runs_it_all_for_its_price_alone() -> None:
    # No spot at all; 10 h of work due in 30 h; a block from 5 h to 17 h holds it.
    job = DeadlineJob(10.0, 30.0, restart_minutes=12, checkpoint_minutes=30)
    run = _with_block(["0" * 400, "0" * 400], job, BookedRun(2, 5.0, 12.0, 40.0))
    assert run["met"] and run["cost_usd"] == pytest.approx(40.0)
    # It waited for the block (nothing billed), then one restart and the work.
    assert run["finish_hours"] == pytest.approx(5.0 + 0.2 + 10.0)
    assert run["spot_hours"] == 0 and run["on_demand_hours"] == pytest.approx(10.2)


def test_without_the_block_the_same_job_pays_on_demand() -> None:
    job = DeadlineJob(10.0, 30.0, restart_minutes=12, checkpoint_minutes=30)
    t = trace(["0" * 400, "0" * 400], ZONES, TICK)
    run = simulate(t, deadline_policy("greedy"), job, np.array([0]), np.array([0])).iloc[0]
    assert run["met"] and run["cost_usd"] == pytest.approx(10.2 * ON_DEMAND)


def test_a_block_shorter_than_the_job_is_left_before_its_end_and_the_rest_runs_outside(
        ) -> None:
    # Spot everywhere; 10 h of work due in 30 h; a block usable from 2 h to 6 h holds
    # 3.8 h of it. The job runs the rest on spot before and after, and leaves the block by
    # its usable end.
    job = DeadlineJob(10.0, 30.0, restart_minutes=12, checkpoint_minutes=30)
    seen = []

    def on_step(t, state, market, chosen) -> None:  # noqa: ANN001
        seen.append(int(chosen[0]))

    t, index = trace(["1" * 400, "1" * 400], ZONES, TICK).with_booked_zone(
        "us-east-1c", "us-east-1")
    run = simulate(t, deadline_policy("greedy"), job, np.array([0]), np.array([0]),
                   on_step=on_step, booked=BookedRun(index, 2.0, 4.0, 7.0)).iloc[0]
    block = len(t.zones) + index
    on_block = [i for i, p in enumerate(seen) if p == block]
    assert on_block == list(range(20, 60))  # ticks 2 h to 6 h, not one after
    assert run["met"]
    # Billed: the block's price, spot outside it (the work it could not hold, restarts).
    outside = run["spot_hours"]
    assert run["cost_usd"] == pytest.approx(7.0 + outside * SPOT)
    assert outside == pytest.approx(10.0 - (4.0 - 0.2) + 2 * 0.2)


def test_a_block_out_of_reach_leaves_every_policy_as_it_was() -> None:
    # The wrapped policy sees the market without the booked column: a block that starts
    # after the deadline changes nothing, for any policy.
    job = DeadlineJob(10.0, 30.0, restart_minutes=12, checkpoint_minutes=30)
    rows = ["".join("1" if (i // 15) % 3 else "0" for i in range(400)),
            "".join("1" if (i // 7) % 4 == 1 else "0" for i in range(400))]
    t = trace(rows, ZONES, TICK)
    grown, index = t.with_booked_zone("us-east-1c", "us-east-1")
    for name in ("greedy", "uniform-progress", "spot-anywhere", "spot-risk"):
        plain = simulate(t, deadline_policy(name), job, np.array([0, 40]), np.array([0, 1]))
        same = simulate(grown, deadline_policy(name), job, np.array([0, 40]),
                        np.array([0, 1]), booked=BookedRun(index, 100.0, 10.0, 0.0))
        assert plain.equals(same), name



@pytest.mark.parametrize("start_hours", [4.55, 5.07, 6.03])
def test_a_job_the_block_splits_counts_the_restart_after_it_and_meets_its_deadline(
        start_hours: float) -> None:
    # No spot: 10 h of work due in 15 h, 30-minute restarts, a block usable for 3.98 h in
    # the middle (not on the ticks). What the block cannot hold runs on-demand before and
    # after it, and after it the job starts again: greedy, which goes on-demand at the last
    # moment, must count that restart too.
    job = DeadlineJob(10.0, 15.0, restart_minutes=30, checkpoint_minutes=30)
    for policy in ("greedy", "uniform-progress"):
        run = _with_block(["0" * 400, "0" * 400], job,
                          BookedRun(2, start_hours, 3.98, 7.0), policy)
        assert run["met"] and run["finish_hours"] <= 15.0, (policy, run.to_dict())
        # Billed: the block, and on-demand for the hours off it (on it for the 39 whole
        # ticks inside its window).
        assert run["cost_usd"] == pytest.approx(7.0 + (run["on_demand_hours"] - 3.9)
                                                * ON_DEMAND)
