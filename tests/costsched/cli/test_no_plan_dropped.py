"""A job with no plan names what of its file was dropped as read (an accelerator of its set
the catalog has no instance type with), in `plan`'s text and JSON and in `launch`'s
refusal, as a plan with a ranking does in its notes: what it was asked for adds up."""

from __future__ import annotations

import json
from pathlib import Path

TASK = """\
name: t
resources:
  cloud: aws
  accelerators: {L40: 1, L4: 1, H100: 1}
  use_spot: true
run: python train.py
"""
DROPPED = "resources.accelerators: L40:1 dropped: the catalog has no instance type with it"


def test_no_plan_names_the_accelerator_dropped_from_its_set(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "t.yaml"
    path.write_text(TASK)
    planned = cli("plan", path)
    assert planned.exit_code == 1, planned.output
    said = " ".join(planned.stderr.split())
    assert "no plan: job t: no spot price known" in said and "H100:1 or L4:1" in said
    assert DROPPED in said and "did you mean 'L40S:1'?" in said
    doc = json.loads(cli("plan", path, "--json").stdout)
    assert DROPPED in doc["jobs"][0]["reason"]
    launched = cli("launch", path)
    assert launched.exit_code == 2, launched.output
    assert DROPPED in " ".join(launched.stderr.split())


def test_a_plan_with_no_drop_adds_nothing(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "t.yaml"
    path.write_text(TASK.replace("L40: 1, ", ""))
    planned = cli("plan", path)
    assert planned.exit_code == 1 and "dropped" not in planned.stderr
