"""The scope masks kept per process (`policies.base.scope_mask`, at most _MASKS_KEPT, the
oldest dropped first) are kept by every thread that asks for one: where two threads drop
the oldest at once (another thread's drop landing between this one's finding the oldest
and dropping it), neither fails."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

from costsched.policies import base


class Everywhere:
    """A scope in which every offering lies (hashable: it is part of the cache's key)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def mask(self, offerings: pd.DataFrame, _region: str, _constraints: Any) -> np.ndarray:
        return np.ones(len(offerings), dtype=bool)


class Kept(dict):
    """The cache, where another thread's whole ask (which drops the oldest mask too)
    lands once this thread has found the oldest mask and before it drops it."""

    other: Any = None

    def __iter__(self) -> Iterator:
        found = super().__iter__()
        oldest = next(found)
        other, self.other = self.other, None
        if other is not None:
            asking = threading.Thread(target=other)
            asking.start()
            asking.join(60)
        return iter([oldest])


def test_two_threads_dropping_the_oldest_mask_at_once_both_get_theirs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    offerings = pd.DataFrame({"zone": ["a", "b", "c"]})
    kept = Kept()
    monkeypatch.setattr(base, "_MASKS", kept)
    for n in range(base._MASKS_KEPT):  # full
        base.scope_mask(Everywhere(f"s{n}"), offerings, "us-east-1", None)  # type: ignore[arg-type]
    theirs: list[np.ndarray] = []
    kept.other = lambda: theirs.append(
        base.scope_mask(Everywhere("theirs"), offerings, "us-east-1", None))  # type: ignore[arg-type]
    mine = base.scope_mask(Everywhere("mine"), offerings, "us-east-1", None)  # type: ignore[arg-type]
    assert mine.tolist() == [True, True, True]
    assert [t.tolist() for t in theirs] == [[True, True, True]]
    assert len(kept) <= base._MASKS_KEPT
