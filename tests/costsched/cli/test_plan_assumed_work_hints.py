"""A SkyPilot task that gives no work: a refusal says first that its deadline cannot be
checked, and each key it offers works as said; a speed given without work is refused in
words that name what to add, and the accepted forms are the ones listed."""

from __future__ import annotations

import re
from pathlib import Path

TASK = """\
name: clf
resources:
  accelerators: {{L4: 1, A10G: 1}}
  use_spot: true
run: python train.py
{section}"""


def _task(folder: Path, section: str = "", name: str = "sky.yaml") -> Path:
    path = folder / name
    path.write_text(TASK.format(section=section))
    return path


def _said(result) -> str:  # noqa: ANN001
    return " ".join(result.output.split())


def test_the_estimate_s_key_in_a_refusal_of_assumed_work_works_as_said(cli, tmp_path: Path) -> None:  # noqa: ANN001
    refused = cli("plan", _task(tmp_path), "--deadline", "30m")
    assert refused.exit_code == 1
    said = _said(refused)
    assert said.startswith(
        "no plan: job clf: its work is not given, so its deadline cannot be checked: "
    ), said
    hint = re.search(
        r"`(costsched: \{steps: N, throughputs: \{A10G: STEPS_PER_S\}\})` in "
        r"\S+sky\.yaml gives the measured figure",
        said,
    )
    assert hint, said
    section = hint[1].replace("N", "900").replace("STEPS_PER_S", "5") + "\n"
    followed = cli("plan", _task(tmp_path, section, "given.yaml"), "--deadline", "30m")
    assert followed.exit_code == 0, followed.output
    assert "not given" not in _said(followed)


def test_a_speed_without_work_names_the_work_to_add_and_hours_beside_it_is_accepted(
    cli, tmp_path: Path
) -> None:  # noqa: ANN001
    refused = cli("plan", _task(tmp_path, "costsched: {throughputs: {A10G: 5}}\n"))
    assert refused.exit_code != 0
    said = _said(refused)
    assert "throughputs gives the job's speed, not its work" in said, said
    assert "`costsched: {hours: H, ...}`, hours of work on the task's slowest GPU" in said
    assert "(got none)" not in said
    hours = _task(tmp_path, "costsched: {hours: 2, throughputs: {A10G: 5}}\n", "h.yaml")
    planned = cli("plan", hours)
    assert planned.exit_code == 0, planned.output
    assert "2 h of work on 1xL4" in _said(planned)


def test_the_forms_a_task_is_told_are_those_it_accepts(cli, tmp_path: Path) -> None:  # noqa: ANN001
    both = cli("plan", _task(tmp_path, "costsched: {hours: 2, steps: 100}\n"))
    said = _said(both)
    assert "hours and reference_gpu" not in said, said
    assert "hours (of work on the task's slowest GPU, or on reference_gpu)" in said, said
    alone = cli("plan", _task(tmp_path, "costsched: {hours: 2}\n", "alone.yaml"))
    assert alone.exit_code == 0, alone.output  # hours alone: as the list says
