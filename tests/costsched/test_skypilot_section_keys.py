"""Every key of a SkyPilot task's `costsched:` section given a bad value is refused
naming that key as the task wrote it (`costsched.at_cap`), never where the job keeps it
(`constraints.at_cap`)."""

from __future__ import annotations

import pytest

from costsched.model import InvalidInput
from costsched.skypilot import _Section, parse_task

# A value each key refuses (whether its section or the job's own rules refuse it).
BAD = {
    "model": 3, "throughputs": {"T4": -1}, "precision": "fp7", "steps": -5, "epochs": -1,
    "steps_per_epoch": -1, "hours": "soon", "reference_gpu": "Z80:1",
    "checkpoint": {"size_gb": -1}, "deadline": "tomorrowish", "budget": -3,
    "budget_name": 7, "at_cap": "pause", "max_price": -1, "max_migrations": -1,
    "markets": ["cheap"], "sweep": {"lr": []},
}


def test_every_key_of_the_section_has_a_bad_value_here() -> None:
    assert set(BAD) == set(_Section.model_fields)


@pytest.mark.parametrize("key", sorted(BAD))
def test_a_bad_value_is_refused_by_the_key_the_task_wrote(key: str) -> None:
    doc = {"name": "t", "run": "python train.py", "resources": {"accelerators": "T4:1"},
           "costsched": {"budget": 3, key: BAD[key]}}
    with pytest.raises(InvalidInput) as refused:
        parse_task(doc, "t.yaml")
    text = str(refused.value)
    assert f"field costsched.{key}" in text, text
    assert "constraints." not in text, text


def test_a_budget_name_no_budget_has_is_named_as_the_task_wrote_it(tmp_path) -> None:  # noqa: ANN001
    from costsched.taskfile import load

    path = tmp_path / "t.yaml"
    path.write_text("run: python train.py\nresources: {accelerators: T4:1}\n"
                    "costsched: {budget_name: taem}\n")
    [spec] = load(path)
    [note] = [n for n in spec.task.notes if "taem" in n]
    assert note.startswith("launch will refuse: field costsched.budget_name 'taem': "), note
