"""The words of the step a job resumes from: exact where its checkpoint's step is known (its
marker's, its files' names', a save at its last step), 'about' where it was read off the
time the checkpoint was saved; and the start hint of a failed job in the same terms."""

from __future__ import annotations

from costsched.cli.status_next import starts_again
from costsched.service.jobs.resumed_words import inferred, resumed_words


def test_a_known_step_is_said_exactly() -> None:
    assert resumed_words(300, 394, True) == (
        "resumes from step 300 (its checkpoint's): 94 steps lost")
    assert resumed_words(300, 394, False) == (
        "resumes from step 300 (its checkpoint's): at least 94 steps lost (since its last "
        "reading at step 394)")


def test_a_step_read_off_the_time_of_its_save_is_said_about() -> None:
    said = resumed_words(398, 585, True, inferred=True)
    assert said == ("resumes from about step 398 (its checkpoint's, read off the time it was "
                    "saved): about 187 steps lost")
    assert inferred(said) and not inferred(resumed_words(398, 585, True))
    # a floor of the step saved against a floor of the step reached: about, not at least
    assert resumed_words(398, 585, False, inferred=True) == (
        "resumes from about step 398 (its checkpoint's, read off the time it was saved): "
        "about 187 steps lost (since its last reading at step 585)")


def test_a_checkpoint_at_its_last_step_lost_none_however_its_step_is_known() -> None:
    # (a notice's or a stop's save, at the step it reported last: the step saved is at least
    # that one)
    assert resumed_words(400, 400, True, inferred=True) == (
        "resumes from step 400 (its checkpoint's): no step lost")
    assert resumed_words(0, 0, True, inferred=True) == (
        "resumes from step 0 (no checkpoint yet): no step lost")
    assert resumed_words(0, 12, True, inferred=True) == (
        "resumes from step 0 (no checkpoint: from the start): 12 steps lost")


def test_a_failed_job_s_start_hint_says_about_a_step_read_off_the_time() -> None:
    assert starts_again(5, 60) == ("`costsched start 5` starts it again from step 60, its "
                                    "newest verified checkpoint's")
    assert starts_again(5, 398, True) == (
        "`costsched start 5` starts it again from about step 398, its newest verified "
        "checkpoint's, read off the time it was saved")
    assert starts_again(5, 0, True).endswith("from step 0: it published no checkpoint")


def test_a_restart_on_errors_says_about_a_step_read_off_the_time() -> None:
    from costsched.service.jobs.restarts import restarted

    assert restarted("exit code 1", 60, 1, 2) == (
        "exit code 1: restarted from step 60, 1 of 2 restarts on errors used")
    assert restarted("exit code 1", 398, 1, 2, True) == (
        "exit code 1: restarted from about step 398 (its checkpoint's, read off the time it "
        "was saved), 1 of 2 restarts on errors used")
