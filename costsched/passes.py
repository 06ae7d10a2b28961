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
from typing import TypeVar

T = TypeVar("T")

_CACHE: ContextVar[dict | None] = ContextVar("costsched_pass_cache", default=None)


@contextmanager
def one_pass() -> Iterator[None]:
    """Within the block, `memo` keeps what it computes; a nested pass shares the outer one."""
    if _CACHE.get() is not None:
        yield
        return
    token = _CACHE.set({})
    try:
        yield
    finally:
        _CACHE.reset(token)


def memo(key: Hashable, compute: Callable[[], T]) -> T:
    """`compute()` once per `key` inside a pass (each caller gets a copy it may change);
    outside a pass, `compute()`."""
    cache = _CACHE.get()
    if cache is None:
        return compute()
    if key not in cache:
        cache[key] = compute()
    return _copied(cache[key])


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
