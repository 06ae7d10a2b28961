"""A job that ended before a deadline still ahead is 'due' then, not 'was due': the words
read right whether the deadline has passed or not."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from costsched.service.views import due_words

DUE = datetime(2026, 11, 30, 20, 0, tzinfo=timezone.utc)


def test_a_deadline_still_ahead_is_due_not_was_due() -> None:
    now, ended = DUE - timedelta(hours=1), DUE - timedelta(hours=2)
    assert due_words(DUE, now, True, "failed", ended) == (
        "it failed with 2.00 h left before its deadline (2026-11-30 20:00 UTC)")
    assert due_words(DUE, now, True, "succeeded", ended) == (
        "due 2026-11-30 20:00 UTC: met, it finished 2.00 h before")
    assert due_words(DUE, now, True, "succeeded", ended, short=True) == (
        "it ended with 2.00 h left before its deadline (2026-11-30 20:00 UTC), its declared "
        "steps not reached")


def test_a_deadline_passed_still_was_due() -> None:
    later = DUE + timedelta(hours=3)
    assert due_words(DUE, later, True, "failed", DUE - timedelta(hours=2)) == (
        "it failed with 2.00 h left before its deadline (2026-11-30 20:00 UTC)")
    assert due_words(DUE, later, True, "failed", DUE + timedelta(hours=1)) == (
        "it failed 1.00 h after its deadline (2026-11-30 20:00 UTC)")
