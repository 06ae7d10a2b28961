"""A job in setup, in words every view shares: its progress reads 'in setup' only while it
is live with no step known, and its line says since when and for how long."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from costsched.service.setup_phase import setup_seconds, setup_words
from costsched.service.views import job_progress, progress_words

NOW = datetime(2026, 12, 2, 1, 0, 30, tzinfo=timezone.utc)


def test_progress_reads_in_setup_only_while_live_with_no_step() -> None:
    assert progress_words(None, None, live=True, setup=True) == "in setup"
    assert progress_words(None, None, live=True) == "no step yet"
    assert progress_words(None, None, live=False, setup=True) == "-"
    # A job resumed at a known step keeps it: its line says it is in setup.
    assert progress_words(0.125, "reported", live=True, setup=True) == "12%"
    assert progress_words(None, None, live=True, step=500, setup=True) == "step 500"
    job = {"state": "running", "progress": None, "progress_source": None, "step": 0}
    assert job_progress({**job, "setup_since": "2026-12-02T01:00:10Z"}) == "in setup"
    assert job_progress({**job, "setup_since": None}) == "no step yet"


def test_setup_words_say_since_when_and_how_long() -> None:
    since = NOW - timedelta(seconds=20)
    assert setup_seconds(since, NOW) == 20.0
    assert setup_seconds(NOW + timedelta(seconds=3), NOW) == 0.0  # a clock ahead
    assert setup_words(since, 20.0, NOW) == (
        "in setup since 01:00:10 UTC (20 s so far), as its instance reports: its command "
        "starts once setup ends")
    assert setup_words(since - timedelta(days=1), 86_420.0, NOW).startswith(
        "in setup since 2026-12-01 01:00:10 UTC (24 h so far)")
