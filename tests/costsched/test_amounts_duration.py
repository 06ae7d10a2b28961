"""A span of time said beside what makes it (work lost at a pace) reads in one unit style,
the units an age takes, never '0.1458 min' a moment after '3.4 s'."""

from __future__ import annotations

import pytest

from costsched.amounts import duration


@pytest.mark.parametrize(("seconds", "said"), [
    (3.44, "3.4 s"), (8.77, "8.8 s"), (0.008, "0.008 s"), (45, "45 s"), (59.97, "1 min"),
    (100, "1.7 min"), (2400, "40 min"), (12_000, "3.3 h"), (36_000, "10 h"), (0, "0 s"),
    (None, "-")])
def test_a_duration_reads_in_the_unit_an_age_takes(seconds: float | None, said: str) -> None:
    assert duration(seconds) == said


def test_lost_work_seconds_apart_read_alike() -> None:
    first, second = duration(65 / 18.9), duration(164 / 18.7)
    assert (first, second) == ("3.4 s", "8.8 s")
    assert duration(1e-6) == "<0.001 s" and duration(1e9) == "380 mo"  # never an exponent
