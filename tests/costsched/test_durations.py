from __future__ import annotations

import re
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


@pytest.mark.parametrize(("written", "accepted"), [
    ("3 days", "3d"), ("36 hours", "36h"), ("90 mins", "90m"), ("1 day 12 hours", "1d12h"),
    ("2 weeks", "14d"), ("1.5 Days", "1.5d")])
def test_a_duration_in_words_is_refused_with_the_spelling_accepted(written: str,
                                                                   accepted: str) -> None:
    with pytest.raises(ValueError, match=rf"; did you mean '{re.escape(accepted)}'\?$"):
        parse_hours(written)
    assert parse_hours(accepted) == parse_hours(accepted)  # the suggestion is accepted
    assert isinstance(parse_hours(accepted), float)


def test_two_d_with_a_space_is_accepted_and_nonsense_gets_no_suggestion() -> None:
    assert parse_hours("2 d") == 48.0
    for text in ("soon", "3 dayz"):
        with pytest.raises(ValueError) as caught:
            parse_hours(text)
        assert "did you mean" not in str(caught.value)


def test_a_job_files_deadline_in_words_names_the_field_and_the_spelling() -> None:
    from costsched.jobspec import parse
    from costsched.model import InvalidInput

    with pytest.raises(InvalidInput) as caught:
        parse({"name": "j", "model": "ResNet-50", "steps": 10,
               "constraints": {"deadline": "3 days"}},
              "job.yaml")
    said = str(caught.value)
    assert said.startswith("job.yaml: job 'j': field ") and "deadline" in said, said
    assert said.endswith("'3 days': expected hours (48, '36h', '2d', '90m') or an ISO time "
                         "(2020-03-03T00:00Z); did you mean '3d'?"), said


@pytest.mark.parametrize("text", ["-2h", "-1d", " - 90m", "-1d12h"])
def test_a_negative_duration_is_said_to_be_negative(text: str) -> None:
    """A duration written with a minus sign is a sign mistake, not an unknown form."""
    with pytest.raises(ValueError, match=r"is negative: expected a positive duration "
                                         r"\(48, '36h', '2d', '90m'\) or an ISO time"):
        parse_hours(text)


def test_a_task_files_negative_deadline_names_file_field_and_sign(tmp_path) -> None:
    from costsched.model import InvalidInput
    from costsched.taskfile import load

    task = tmp_path / "task.yaml"
    task.write_text("name: j\nresources: {accelerators: V100:1}\nrun: python train.py\n"
                    "costsched: {steps: 100, throughputs: {V100: 3}, deadline: -2h}\n")
    with pytest.raises(InvalidInput) as caught:
        load(str(task))
    said = str(caught.value)
    assert "task.yaml" in said and "costsched.deadline" in said, said
    assert "'-2h' is negative" in said, said
    assert "\n" not in said
