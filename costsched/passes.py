"""One pass over many jobs reads what does not change during it once.

`status`, `migrate`, `report` and the daemon's passes decide or show every job of a store
from the same instant: the prices as of that instant, the price history before it, the
spot availability observations and the throughput table are the same for every job. Inside
`one_pass()`, the readers of those facts (`memo`) compute each distinct query once and hand
every later caller its own copy; outside a pass, every call reads afresh, as before. Only
facts a pass never writes are kept: prices and availability observations, not jobs or
placements.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone
from typing import TypeVar

T = TypeVar("T")

_CACHE: ContextVar[dict | None] = ContextVar("costsched_pass_cache", default=None)
_NOW = "now"  # the cache's entry for the instant the pass decides at


@contextmanager
def one_pass() -> Iterator[None]:
    """Within the block, `memo` keeps what it computes; a nested pass shares the outer one."""
    if _CACHE.get() is not None:
        yield
        return
    token = _CACHE.set({_NOW: datetime.now(timezone.utc)})
    try:
        yield
    finally:
        _CACHE.reset(token)


def memo(key: Hashable, compute: Callable[[], T], *, shared: bool = False) -> T:
    """`compute()` once per `key` inside a pass (each caller gets a copy it may change, or,
    `shared`, the one value, for callers that only read it); outside a pass, `compute()`."""
    cache = _CACHE.get()
    if cache is None:
        return compute()
    if key not in cache:
        cache[key] = compute()
    return cache[key] if shared else _copied(cache[key])


def pass_now() -> datetime:
    """The instant every decision of the pass is made at (when the pass began); now,
    outside a pass. Side effects (a move's start, a placement) keep the real clock."""
    cache = _CACHE.get()
    return datetime.now(timezone.utc) if cache is None else cache[_NOW]


def frozen(filters: dict) -> tuple:
    """Keyword filters as a key: lists become tuples, in name order."""
    return tuple(sorted((k, tuple(v) if isinstance(v, (list, tuple)) else v)
                        for k, v in filters.items()))


def _copied(value: T) -> T:
    frame_copy = getattr(value, "copy", None)
    if callable(frame_copy) and hasattr(value, "columns"):  # a DataFrame: its own copy
        return frame_copy()
    if value is None or isinstance(value, (int, float, str, tuple, frozenset)):
        return value
    return copy.deepcopy(value)
