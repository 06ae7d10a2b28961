"""A job's billed hours beyond its training are put down to the causes costsched knows,
each with its share, the shares adding up to the whole as written: the steps a preemption
lost and the job trained again (as its recovery counted them, at its measured pace), its
setup where its instances measured it, and the rest before its first step and after its
last. A cause it does not know is never named: no 'setup' that was not measured, and a
preemption whose loss was not counted is said to lie in that rest."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.model import RECOVERY_NOTE, steps_lost
from costsched.report.outside import REST, Causes, causes_of, outside_words, split_down
from costsched.service.jobs import resumed_words as said
from costsched.store.job_rows import EventRow

AT = datetime(2026, 12, 2, 2, 39, tzinfo=timezone.utc)
PACE = 1 / 28.8  # seconds per step: the trial's 28.8 steps/s


def _note(words: str, kind: str = RECOVERY_NOTE) -> EventRow:
    return EventRow(1, 1, AT, kind, None, None, f"instance 1-b10f-j1-m1-0: {words}")


@pytest.mark.parametrize(("words", "count"), [
    (said.resumed_words(200, 889, True), (689.0, "")),
    (said.resumed_words(200, 1889, True), (1689.0, "")),  # '1,689 steps lost'
    (said.resumed_words(300, 301, True), (1.0, "")),  # '1 step lost'
    (said.resumed_words(300, 394, False), (94.0, "at least ")),
    (said.resumed_words(398, 585, True, True), (187.0, "about ")),
    (said.resumed_words(398, 585, False, True), (187.0, "about ")),
    (said.resumed_words(300, 300, True), (0.0, "")),
    (said.resumed_words(0, 0, True), (0.0, "")),
    (said.unreported_words(200, False), (0.0, "")),
    (said.unreported_words(200, True), None),
    (said.nothing_saved_words(), None),
    (said.unknown_step_words(3), None),
    (said.unsaid_step_words(4, 3, 100), None),
    ("node 1: " + said.resumed_words(304, 382, True), (78.0, ""))])
def test_each_recoverys_words_give_the_steps_it_counted(words: str, count: tuple | None
                                                         ) -> None:
    assert steps_lost(words) == count


def test_the_trials_job_puts_its_gap_down_to_the_steps_its_preemption_lost() -> None:
    # Billed 0.0328 h; trained 2,500 steps at 28.8 steps/s (0.0241 h); 689 steps lost at
    # its preemption (0.00665 h, 20.3% of its billed hours); setup 1.2 s on each of its 2
    # instances (2%); the rest 3.9%.
    causes = causes_of([_note(said.resumed_words(200, 889, True)),
                        _note("gone", kind="checkpoint")], [1.2, 1.2])
    assert causes == Causes(689.0, "", 1, 0, 2.4, 2, 2)
    words = outside_words(0.0328, 2500 * PACE / 3600, PACE, causes)
    assert words == ("26% of its billed hours outside training: 689 steps lost at a "
                     "preemption and trained again, 20%; its setup, 2%; " + REST + ", 4%")
    assert "its setup, and" not in words


def test_a_setup_not_measured_is_never_named() -> None:
    causes = causes_of([_note(said.resumed_words(200, 889, True))], [None, None])
    words = outside_words(0.0328, 2500 * PACE / 3600, PACE, causes)
    assert words == ("26% of its billed hours outside training: 689 steps lost at a "
                     f"preemption and trained again, 20%; {REST}, 6%")
    assert "setup" not in words
    partly = causes_of([], [3600.0, None])  # one of its two instances said
    assert outside_words(10.0, 7.0, 1.0, partly) == (
        "30% of its billed hours outside training: its setup, where measured (on 1 of its 2 "
        f"instances), 10%; {REST}, 20%")


def test_a_floor_or_an_estimate_of_the_steps_lost_is_said_so() -> None:
    floor = causes_of([_note(said.resumed_words(200, 889, False))], [])
    assert outside_words(0.0328, 2500 * PACE / 3600, PACE, floor) == (
        "26% of its billed hours outside training: at least 689 steps lost at a preemption "
        f"and trained again, at least 20%; {REST}, at most 6%")
    about = causes_of([_note(said.resumed_words(200, 889, True, True))], [])
    assert "about 689 steps lost at a preemption and trained again, about 20%; " \
        f"{REST}, about 6%" in outside_words(0.0328, 2500 * PACE / 3600, PACE, about)


def test_a_loss_not_counted_lies_in_the_rest_and_is_said_to() -> None:
    causes = causes_of([_note(said.resumed_words(200, 300, True)),
                        _note(said.nothing_saved_words())], [])
    assert causes.lost_unknown == 1 and causes.lost_at == 1
    assert outside_words(1.0, 0.5, 3.6, causes) == (
        "50% of its billed hours outside training: 100 steps lost at a preemption and "
        f"trained again, 10%; {REST}, and the steps lost at a preemption, how many not "
        "known, 40%")


def test_the_steps_lost_are_never_more_than_the_hours_outside_training() -> None:
    causes = Causes(lost_steps=10_000, lost_at=2, setup_seconds=600, measured=1, instances=1)
    assert outside_words(1.0, 0.75, 1.0, causes) == (
        "25% of its billed hours outside training: 10,000 steps lost at 2 preemptions and "
        "trained again")
    assert outside_words(1.0, 0.995, 1.0, causes) == ""  # under 1%: nothing to explain


@pytest.mark.parametrize(("whole", "exact", "split"), [
    (26, [20.3, 0.6, 5.1], [20, 1, 5]), (26, [20.3, 2.0, 3.7], [20, 2, 4]),
    (1, [0.4, 0.4, 0.2], [1, 0, 0]), (10, [10.0, 0.0, 0.0], [10, 0, 0])])
def test_the_shares_add_up_to_the_whole_as_written(whole: int, exact: list[float],
                                                   split: list[int]) -> None:
    assert split_down(whole, exact) == split
    assert sum(split) == whole
