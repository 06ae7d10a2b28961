"""The shared safety rule: only spot can be taken away, and only back to its checkpoint."""

from __future__ import annotations

import numpy as np

from costsched.policies.deadline.base import NONE, DeadlineState, MarketNow, keeps_deadline

TICK, CHECKPOINT, RESTART = 60.0, 600.0, 120.0


def state(progress: float, time_left: float, placement: int) -> DeadlineState:
    one = np.ones(1)
    return DeadlineState(progress=one * progress, work=one * 3600, time_left=one * time_left,
                         placement=np.array([placement]), overhead_left=np.zeros(1),
                         restart=RESTART, checkpoint=CHECKPOINT, home=np.zeros(1, dtype=int),
                         deadline=one * 7200, last_zone=np.zeros(1, dtype=int))


def market() -> MarketNow:
    one = np.ones((1, 1))
    return MarketNow(TICK, one.astype(bool), one * 3600, one, one * 3, np.zeros(1, dtype=int),
                     np.zeros((1, 1)))


def test_waiting_keeps_progress_while_spot_may_lose_it() -> None:
    # 900 s done (300 s past the checkpoint at 600): on-demand after this tick needs the
    # restart and 2,700 s; spot might be preempted back to 600 s and then need 3,000 s.
    progress = 900.0
    time_left = 3600 - progress + RESTART + TICK  # just enough from 900 s, not from 600 s
    s = state(progress, time_left, NONE)
    assert keeps_deadline(s, market(), np.array([NONE]))[0]
    assert not keeps_deadline(s, market(), np.array([0]))[0]  # spot in zone 0
    assert keeps_deadline(s, market(), np.array([1]))[0]  # on-demand always
