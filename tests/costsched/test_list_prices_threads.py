"""The list prices as of a time (`list_prices.listed_on_demand(at)`, kept for the last time
asked for) are that time's in every thread: a daemon's watch and its passes ask for other
times, and another thread's ask landing between this one's keeping and its reading never
makes its answer this one's."""

from __future__ import annotations

import sys
import threading
from datetime import datetime, timezone
from types import FrameType
from typing import Any

import pandas as pd
import pytest

from costsched import list_prices

MINE = datetime(2021, 3, 1, tzinfo=timezone.utc)
OTHER = datetime(2025, 6, 1, tzinfo=timezone.utc)


def test_another_threads_time_asked_for_meanwhile_is_not_this_ones_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(list_prices, "_AT", [])
    listed: list[datetime] = []

    def as_of(at: datetime) -> pd.DataFrame:  # each time's own list prices, told apart
        listed.append(at)
        return pd.DataFrame({"as_of": [at]})

    monkeypatch.setattr(list_prices, "_listed", as_of)
    theirs: list[pd.DataFrame] = []

    def another_thread_asks() -> None:
        asking = threading.Thread(
            target=lambda: theirs.append(list_prices.listed_on_demand(OTHER)))
        asking.start()
        asking.join(60)

    def at_each_line(frame: FrameType, event: str, _arg: Any) -> Any:
        # once this thread has computed its time's prices, at its next line: the other
        # thread's ask, the whole of it
        if event == "line" and listed == [MINE]:
            another_thread_asks()
        return at_each_line

    def tracer(frame: FrameType, event: str, _arg: Any) -> Any:
        return at_each_line if frame.f_code is list_prices._listed_at.__code__ else None

    before = sys.gettrace()
    sys.settrace(tracer)
    try:
        mine = list_prices.listed_on_demand(MINE)
    finally:
        sys.settrace(before)
    assert listed == [MINE, OTHER]  # the other thread asked in between
    assert [t["as_of"].iloc[0] for t in theirs] == [OTHER]
    assert mine["as_of"].iloc[0] == MINE, mine
