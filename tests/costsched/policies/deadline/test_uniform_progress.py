"""uniform-progress as published (Can't Be Late, NSDI 2024), decisions worked out by hand.

Both traces: 60-s ticks, one zone (us-east-1a), spot $1/h, on-demand $3/h; the job has
C = 240 s of work, D = 600 s to its deadline, d = 60 s restarts, 60-s checkpoints. The
line is ep(t) = C t / D = 0.4 t. A start bills its first tick without progress (restart).
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


def test_spot_is_taken_even_behind_the_line_and_on_demand_is_held_by_hysteresis() -> None:
    decisions, run = _run("110000111111")
    assert decisions == [
        SPOT,  # t=0: spot there: take it (rule 2); the tick is the restart, cp stays 0
        SPOT,  # t=60: stay on spot until preempted; cp -> 60
        NONE,  # t=120: preempted, cp = 60 (checkpointed); ep(120) = 48 <= 60: wait;
               #        safety: R = 480 >= C(t) + 2d = 180 + 120
        OD,    # t=180: ep(180) = 72 > cp = 60: behind, on-demand (rule 4); restart tick
        OD,    # t=240: hysteresis: cp = 60 < ep(240 + 120) = 144: stay; cp -> 120
        OD,    # t=300: cp = 120 = ep(300), no longer behind, but cp < ep(420) = 168: stay
               #        (without hysteresis it would wait here); cp -> 180
        SPOT,  # t=360: spot is back: take it although on on-demand (rule 2); restart tick
        SPOT,  # t=420: cp 180 -> 240: done at t = 480
    ]
    assert run["met"] and run["finish_hours"] * 3600 == pytest.approx(480)
    # 4 spot ticks at $1/h and 3 on-demand ticks at $3/h, 60 s each.
    assert run["cost_usd"] == pytest.approx((4 * 1 + 3 * 3) / 60)
    assert run["preemptions"] == 1


def test_without_spot_it_keeps_to_the_line_then_the_safety_net_takes_over() -> None:
    decisions, run = _run("000000000000")
    assert decisions == [
        NONE,  # t=0: cp = 0 = ep(0): not behind; R = 600 >= 240 + 120
        OD,    # t=60: cp = 0 < ep(60) = 24: on-demand; restart tick
        OD,    # t=120: cp = 0 < ep(240) = 96: hold; cp -> 60
        OD,    # t=180: cp = 60 < ep(300) = 120: hold; cp -> 120
        OD,    # t=240: cp = 120 < ep(360) = 144: hold; cp -> 180
        NONE,  # t=300: cp = 180 >= ep(420) = 168: hysteresis over; ep(300) = 120: ahead,
               #        wait (a planned stop keeps the progress); R = 300 >= 60 + 120
        NONE,  # t=360: ep(360) = 144 <= 180; R = 240 >= 180
        NONE,  # t=420: ep(420) = 168 <= 180; R = 180 is not < 180
        OD,    # t=480: safety net: R = 120 < C(t) + 2d = 180: on-demand to the end
        OD,    # t=540: cp 180 -> 240 at t = 600, the deadline
    ]
    assert run["met"] and run["finish_hours"] * 3600 == pytest.approx(600)
    assert run["cost_usd"] == pytest.approx(6 * 3 / 60)
