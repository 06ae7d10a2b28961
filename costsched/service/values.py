"""Checks of the values given to the service: errors name the value, never a CLI flag.

Every message starts with the parameter's name ("starts 0: expected ..."), so that a caller
that got the value from an option can name the option instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from costsched.model import InvalidInput
from costsched.validation import as_time  # noqa: F401 - the service's name for it
from costsched.vocabulary import choose


def choices(name: str, values: Iterable[str], accepted: Iterable[str]) -> list[str]:
    """`values` in their accepted spelling (any case, '-' or '_': 'AWS', 'on-demand'), or
    InvalidInput naming the first one not in `accepted` and the close ones."""
    spelled, error = choose(values, accepted)
    if error is not None:
        raise InvalidInput(f"{name} {error}")
    return spelled


def regions(values: Iterable[str], clouds: Iterable[str] = ()) -> list[str]:
    """`values` when each is a region of one of `clouds` (default any cloud), listed or
    opened since (`costsched.clouds`); else InvalidInput "region 'x': ..." saying what the
    clouds have."""
    from costsched import clouds as places

    names = tuple(clouds) or places.NAMES
    out = []
    for value in values:
        problem = places.region_problem(value, names)
        if problem is not None:
            raise InvalidInput(problem)
        out.append(value)
    return out


def positive(name: str, value: float, what: str = "a positive number") -> float:
    if not 0 < value < math.inf:
        raise InvalidInput(f"{name} {value}: expected {what}")
    return value


def at_least(name: str, value: float, low: float, what: str = "a number") -> float:
    if not low <= value < math.inf:
        raise InvalidInput(f"{name} {value}: expected {what} >= {low:g}")
    return value
