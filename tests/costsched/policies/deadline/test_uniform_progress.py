"""uniform-progress as published (Can't Be Late, NSDI 2024), decisions worked out by hand.

Every trace: 60-s ticks, one zone (us-east-1a), spot $1/h, on-demand $3/h; the job has
C = 240 s of work, D = 600 s to its deadline, d = 60 s restarts, 60-s checkpoints. The
line is ep(t) = C t / D = 0.4 t. A start bills its first tick without progress (restart).
The safety net fires off spot where ceil((C(t) + 2d) / 60) >= floor(R(t) / 60).
"""

from __future__ import annotations

import numpy as np
import pytest

from costsched.backtest.deadline import DeadlineJob, simulate
from costsched.policies.deadline import NONE, UniformProgress
from tests.costsched.backtest.deadline.traces import Recorder, trace

SPOT, OD = 0, 1  # placements in a 1-zone market: spot in zone 0, on-demand in zone 0
JOB = DeadlineJob(work_hours=240 / 3600, deadline_hours=600 / 3600, restart_minutes=1,
                  checkpoint_minutes=1)


def _run(row: str) -> tuple[list[int], dict]:
    recorder = Recorder(UniformProgress())
    runs = simulate(trace([row], ["us-east-1a"]), recorder, JOB, np.array([0]),
                    np.array([0]))
    return recorder.placements[0].tolist(), runs.iloc[0].to_dict()


def test_on_demand_is_kept_when_spot_returns_while_behind_the_hysteresis_line() -> None:
    decisions, run = _run("110000111111")
    assert decisions == [
        SPOT,  # t=0: no instance, spot there: take it (taking risks); restart tick, cp 0
        SPOT,  # t=60: on spot, stay until preempted; cp -> 60
        NONE,  # t=120: preempted, cp = 60 (checkpointed); ep(120) = 48 <= 60: wait;
               #        safety: ceil((180 + 120) / 60) = 5 < floor(480 / 60) = 8
        OD,    # t=180: ep(180) = 72 > cp = 60: behind, on-demand; restart tick
        OD,    # t=240: on on-demand without spot: stay; cp -> 120
        OD,    # t=300: the same (ahead of ep(300) = 120 now, but it never waits); cp -> 180
        OD,    # t=360: spot is back, but cp = 180 < ep(360 + 120) = 192: stay (hysteresis;
               #        without it: a restart and a tick lost to move to spot); cp -> 240
    ]
    assert run["met"] and run["finish_hours"] * 3600 == pytest.approx(420)
    # 2 spot ticks at $1/h and 4 on-demand ticks at $3/h, 60 s each.
    assert run["cost_usd"] == pytest.approx((2 * 1 + 4 * 3) / 60)
    assert run["preemptions"] == 1


def test_on_demand_moves_to_spot_once_ahead_of_the_line_two_restarts_on() -> None:
    decisions, run = _run("000011111111")
    assert decisions == [
        NONE,  # t=0: cp = 0 = ep(0): not behind; safety: 6 < 10
        OD,    # t=60: cp = 0 < ep(60) = 24: on-demand; restart tick
        OD,    # t=120: no spot: stay; cp -> 60
        OD,    # t=180: no spot: stay; cp -> 120
        OD,    # t=240: spot, but cp = 120 < ep(240 + 120) = 144: stay; cp -> 180
        SPOT,  # t=300: spot and cp = 180 >= ep(420) = 168: move to spot; restart tick
        SPOT,  # t=360: cp 180 -> 240: done at t = 420
    ]
    assert run["met"] and run["finish_hours"] * 3600 == pytest.approx(420)
    assert run["cost_usd"] == pytest.approx((4 * 3 + 2 * 1) / 60)


def test_without_spot_on_demand_is_kept_to_the_end_instead_of_waiting() -> None:
    decisions, run = _run("000000000000")
    assert decisions == [
        NONE,  # t=0: cp = 0 = ep(0): not behind
        OD,    # t=60: cp = 0 < ep(60) = 24: on-demand; restart tick
        OD,    # t=120: cp -> 60
        OD,    # t=180: cp -> 120
        OD,    # t=240: cp -> 180
        OD,    # t=300: ahead of ep(300) = 120 and of ep(420) = 168, but no spot: stay
               #        (waiting would cost a second restart later); cp -> 240 at t = 360
    ]
    assert run["met"] and run["finish_hours"] * 3600 == pytest.approx(360)
    assert run["cost_usd"] == pytest.approx(5 * 3 / 60)


def test_the_safety_net_takes_a_waiting_job_to_on_demand_to_the_end() -> None:
    decisions, run = _run("111100000000")
    assert decisions == [
        SPOT,  # t=0: spot: take it; restart tick
        SPOT,  # t=60: cp -> 60
        SPOT,  # t=120: cp -> 120
        SPOT,  # t=180: cp -> 180
        NONE,  # t=240: preempted, cp = 180 (checkpointed); ep(240) = 96: ahead, wait;
               #        safety: ceil((60 + 120) / 60) = 3 < floor(360 / 60) = 6
        NONE,  # t=300: 3 < 5
        NONE,  # t=360: 3 < 4
        OD,    # t=420: 3 >= floor(180 / 60) = 3: on-demand to the end; restart tick
        OD,    # t=480: cp 180 -> 240 at t = 540
    ]
    assert run["met"] and run["finish_hours"] * 3600 == pytest.approx(540)
    assert run["cost_usd"] == pytest.approx((4 * 1 + 2 * 3) / 60)
