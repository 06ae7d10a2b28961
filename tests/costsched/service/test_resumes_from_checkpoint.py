"""The one rule for a checkpoint a move or recovery resumes from: its step above 0. A version
at step 0 (files written before the first step: a job's hyperparameters, a log's header)
resumes from the start, as none would, in a recovery's words and a start's hint alike."""

from __future__ import annotations

from costsched.cli.status_next import starts_again
from costsched.service.jobs.resumed_words import resumed_words, resumes_from_checkpoint


def test_only_a_step_above_0_is_a_checkpoint_to_resume_from() -> None:
    assert resumes_from_checkpoint(1)
    assert resumes_from_checkpoint(600.0)
    assert not resumes_from_checkpoint(0)
    assert not resumes_from_checkpoint(0.0)
    assert not resumes_from_checkpoint(-3)  # never a step: as none


def test_a_recovery_and_a_start_from_step_0_say_no_checkpoint() -> None:
    # read off the time it was saved or not, step 0 is the start: never "about step 0"
    for inferred in (False, True):
        assert resumed_words(0.0, 55, True, inferred=inferred) == (
            "resumes from step 0 (no checkpoint: from the start): 55 steps lost")
    assert starts_again(7, 0.0, True) == (
        "`costsched start 7` starts it again from step 0: it published no checkpoint")
    assert starts_again(7, 1.0) == (
        "`costsched start 7` starts it again from step 1, its newest verified checkpoint's")
