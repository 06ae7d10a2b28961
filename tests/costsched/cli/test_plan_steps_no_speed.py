"""A SkyPilot task whose `costsched:` section gives its steps but no speed for them (no
model, throughputs or hours) is planned, not refused: per hour of work on its slowest GPU,
as a task that gives no work is, saying that the speed is what a total needs and which key
gives it. The key it names is tried: it gives totals. Bundled prices, nothing collected."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

TASK = """\
name: seqreg
resources:
  accelerators: {A10G: 1, L4: 1}
  use_spot: true
run: {run}
costsched:
  steps: 3000
"""


def task(folder: Path, extra: str = "", run: str = "python train.py") -> Path:
    path = folder / "sky.yaml"
    path.write_text(TASK.replace("{run}", run) + extra)
    return path


def test_steps_without_speed_plan_per_hour_of_work_and_name_the_missing_speed(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = task(tmp_path)
    result = cli("plan", path, "--top", "3", "--wide")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert ("seqreg: 3,000 steps, speed not given: per hour of work on 1xL4 (the slowest GPU "
            "of the task); by cost") in out
    assert "$/work-h" in out and "total $" not in out
    assert (f"{path} gives the work (3,000 steps) but no speed, so its hours are not known: "
            "figures are for 1 h of work on 1xL4; a total needs the speed: `costsched: "
            "{throughputs: {L4: steps/s}}` or `costsched: {model: NAME}` beside the steps "
            f"in {path}") in out
    assert "the work is not given" not in out

    doc = json.loads(cli("plan", path, "--json", "--top", "3").stdout)
    work = doc["jobs"][0]["work"]
    assert work["assumed"] is True and work["steps_given"] == 3000
    assert work["keys"] == ["costsched.throughputs", "costsched.model"]


def test_epochs_without_speed_are_their_steps(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sky.yaml"
    path.write_text(TASK.replace("{run}", "python train.py").replace(
        "steps: 3000", "epochs: 3\n  steps_per_epoch: 1000"))
    doc = json.loads(cli("plan", path, "--json", "--top", "1").stdout)
    assert doc["jobs"][0]["work"]["steps_given"] == 3000


def test_the_speed_the_note_names_gives_totals(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = task(tmp_path, "  throughputs: {L4: 40, A10G: 50}\n")
    result = cli("plan", path, "--top", "3", "--wide")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "seqreg, 3,000 steps; by cost" in out and "total $" in out
    assert "speed not given" not in out


def test_a_launch_of_it_measures_its_speed(cli, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    project = tmp_path / "project"
    project.mkdir()
    path = task(project, run=f"{sys.executable} -c 'import time; time.sleep(60)'")
    path.write_text(path.read_text() + "workdir: .\n")
    launched = cli("launch", path, "--wait", "0")
    try:
        assert launched.exit_code == 0, launched.output
        out = " ".join(launched.stdout.split())
        assert "gives the work (3,000 steps) but no speed" in out
        assert "a first run measures it" in out
        status = json.loads(cli("status", "1", "--json").stdout)
        job = status["jobs"][0] if isinstance(status, dict) else status[0]
        assert job["work_assumed"]["steps_given"] == 3000
    finally:
        stopped = cli("stop", "1")
        assert stopped.exit_code == 0, stopped.output
