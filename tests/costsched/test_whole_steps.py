"""A fractional step count (`steps: 2500.5`) is refused in one line naming the file, the
field and the accepted form, in a job file and in a SkyPilot task's costsched section, as
negative, zero and text values are: never read as 2,500 steps without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.model import InvalidInput
from costsched.taskfile import load

OWN = "name: a\nmodel: A3C\nsteps: {steps}\n"
SKY = ("resources: {{accelerators: V100}}\nrun: python train.py\n"
       "costsched: {{model: A3C, steps: {steps}}}\n")


@pytest.mark.parametrize(("text", "job", "field"), [(OWN, "a", "steps"),
                                                    (SKY, "job", "costsched.steps")])
def test_a_fractional_step_count_is_refused_in_one_line(tmp_path: Path, text: str,
                                                        job: str, field: str) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(text.format(steps="2500.5"))
    with pytest.raises(InvalidInput) as info:
        load(path)
    assert str(info.value) == (f"{path}: job {job!r}: field {field}: 2500.5: expected a "
                               "whole number of steps")


@pytest.mark.parametrize("steps", ["2500", "2500.0", "2.5e3"])
def test_a_whole_step_count_reads_as_written(tmp_path: Path, steps: str) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(OWN.format(steps=steps))
    [spec] = load(path)
    assert spec.steps == 2500
