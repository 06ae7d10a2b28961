from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.durations import parse_hours


@pytest.mark.parametrize("text", ["1s", "1h30", "now", "today", "2w", "Dec 1 2026",
                                  "12/01/2026", "2026-13-45"])
def test_text_that_is_neither_a_duration_nor_an_iso_time_is_refused_with_the_forms(
        text: str) -> None:
    """'1s' is not the year 1, nor 'now' the moment it is read: each is refused with the
    forms a deadline takes."""
    with pytest.raises(ValueError, match=r"expected hours \(48, '36h', '2d', '90m'\) or an "
                                         r"ISO time"):
        parse_hours(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("36h", 36.0), ("2d", 48.0), ("90m", 1.5), ("1d12h", 36.0), ("48", 48.0),
    ("2026-12-01", datetime(2026, 12, 1, tzinfo=timezone.utc)),
    ("2026-12-01T10:00Z", datetime(2026, 12, 1, 10, tzinfo=timezone.utc)),
    ("2026-12-01 10:00", datetime(2026, 12, 1, 10, tzinfo=timezone.utc)),
    ("2026-12-01T10:00+02:00", datetime(2026, 12, 1, 8, tzinfo=timezone.utc)),
])
def test_durations_and_iso_times_are_read(text: str, expected: object) -> None:
    assert parse_hours(text) == expected
