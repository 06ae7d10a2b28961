"""A job's progress reads down, never 100% short of its last step: 2,492 of 2,500 reads
99.6%, not 100%."""

from __future__ import annotations

from costsched.service.views import progress_words


def test_progress_short_of_the_end_never_reads_a_hundred() -> None:
    assert progress_words(2492 / 2500, "reported") == "99.6%"
    assert progress_words(0.99999, "reported") == "99.9%"
    assert progress_words(1.0, "reported") == "100%"


def test_progress_rounds_down() -> None:
    assert progress_words(0.4299, "reported") == "42%"
    assert progress_words(0.29, "reported") == "29%"
    assert progress_words(0.0, "reported") == "0%"
    assert progress_words(0.995, "reported") == "99.5%"
