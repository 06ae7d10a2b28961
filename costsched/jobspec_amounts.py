"""The bounds of a job file's numbers, said as a task file typed them ('-100: expected a
positive number of at most 1e+12', never '-100.0')."""

from __future__ import annotations

import math


def typed(value: float) -> str:
    """A number as a task file most likely typed it: -100, not the -100.0 it was read as."""
    whole = math.isfinite(value) and float(value).is_integer() and abs(value) < 1e15
    return str(int(value)) if whole else repr(value)


def positive(value: float | None, what: str, most: float) -> float | None:
    """`value` when it is None or positive and at most `most`; else ValueError saying so."""
    if value is not None and (not math.isfinite(value) or value <= 0 or value > most):
        raise ValueError(f"{typed(value)}: expected a positive {what} of at most {most:g}")
    return value


def amount(value: float, what: str, most: float) -> float:
    """A finite amount from 0 to `most`."""
    if not math.isfinite(value) or value < 0 or value > most:
        raise ValueError(f"{typed(value)}: expected {what} from 0 to {most:g}")
    return value
