"""`plan` on a configuration whose launcher boots no instance (the local one) leaves a cloud
instance's start out of its hours and totals, as `launch` there does, and says what a cloud
launcher would count; on a cloud's launcher it counts the start and says nothing of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

JOB = "name: w\nrun: 'true'\nthroughputs: {L4: 30}\nsteps: 2500\nconstraints: {gpu_models: [L4]}\n"
LEFT_OUT = "the local launcher boots no instance, and the job's setup is in its billed hours"


def _notes(result) -> list[str]:  # noqa: ANN001
    return [" ".join(line.split()) for line in ("\n" + result.stderr).split("\nnote: ")[1:]]


def _plan(cli, path: Path, launcher: str, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
          ) -> tuple[dict, dict]:
    """(the job, its ranking's first row) of `plan --json` with `launcher` configured."""
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", launcher)
    planned = cli("plan", path, "--json")
    assert planned.exit_code == 0, planned.output
    doc = json.loads(planned.stdout)
    [job] = doc["jobs"]
    return job, doc["rankings"][job["ranking_index"]]["ranking"][0]


def test_the_local_launcher_s_plan_leaves_the_start_out_and_says_what_a_cloud_adds(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    (tmp_path / "w.yaml").write_text(JOB)
    planned = cli("plan", tmp_path / "w.yaml")
    assert planned.exit_code == 0, planned.output
    [note] = [n for n in _notes(planned) if "start of a cloud instance" in n]
    assert note == (
        "job w: hours and totals leave out the start of a cloud instance and its boot at each "
        "recovery, as `launch` on the "
        f"local launcher (launch.launcher) does: {LEFT_OUT}; on a cloud launcher they count "
        "its first start 0.25 h: 10 min boot and set-up ([migration] restart_minutes) + 5 min "
        "warm-up ([migration] warmup_minutes)"), planned.stderr


def test_the_start_is_what_a_cloud_launcher_s_plan_adds_to_the_local_one_s(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    (tmp_path / "w.yaml").write_text(JOB)
    here, row_here = _plan(cli, tmp_path / "w.yaml", "local", monkeypatch)
    cloud, row_cloud = _plan(cli, tmp_path / "w.yaml", "gcp", monkeypatch)
    assert here["start_hours"] == 0 and here["start"] == f"left out: {LEFT_OUT}"
    assert cloud["start_hours"] == 0.25 and cloud["start"].startswith("0.25 h to get an")
    assert row_here["offering"] == row_cloud["offering"]  # the same offering first
    assert row_here["start_hours"] == 0 and row_here["start_cost"] == 0
    assert row_cloud["start_cost"] == pytest.approx(0.25 * row_cloud["usd_per_hour"])
    assert row_here["work_hours"] == row_cloud["work_hours"]
    assert row_cloud["expected_cost"] > row_here["expected_cost"] + row_cloud["start_cost"] / 2


def test_a_cloud_launcher_s_plan_says_nothing_of_it(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "gcp")
    (tmp_path / "w.yaml").write_text(JOB)
    planned = cli("plan", tmp_path / "w.yaml")
    assert planned.exit_code == 0, planned.output
    assert "start of a cloud instance" not in planned.stderr


def test_a_no_plan_says_nothing_of_it(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    (tmp_path / "w.yaml").write_text(JOB.replace("[L4]}", "[L4], regions: [ap-south-1]}"))
    planned = cli("plan", tmp_path / "w.yaml")
    assert "no plan" in planned.output and "ap-south-1" in planned.output, planned.output
    assert "start of a cloud instance" not in planned.output


def test_a_plan_of_work_not_given_says_no_start_comes_on_top_of_its_rate(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    (tmp_path / "t.yaml").write_text("name: t\nresources: {accelerators: T4:1, use_spot: true}\n"
                                     "run: python train.py\n")
    planned = cli("plan", tmp_path / "t.yaml")
    assert planned.exit_code == 0, planned.output
    [note] = [n for n in _notes(planned) if "start" in n]
    assert note == (
        "job t: no start comes on top of the $/work-h, as `launch` on the local launcher "
        f"(launch.launcher) counts none: {LEFT_OUT}; on a cloud launcher its first start "
        "0.25 h: 10 min boot and set-up ([migration] restart_minutes) + 5 min warm-up "
        "([migration] warmup_minutes) comes on top, once, at the offering's $/h"), note
    assert "hours and totals" not in planned.output


TASK = "name: t\nrun: 'true'\nresources: {accelerators: L4:1, use_spot: true}\n"


@pytest.mark.parametrize(("text", "counted"), [
    (JOB, "its first start, 0.25 h, and each restart, 0.25 h, count in the expected hours"),
    (TASK, "its first start, 0.25 h, comes on top, once, at the offering's $/h, and each "
           "restart takes 0.25 h")])
def test_explain_on_the_local_launcher_says_its_start_and_restarts_once(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,  # noqa: ANN001
        counted: str) -> None:
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    (tmp_path / "w.yaml").write_text(text)
    explained = cli("plan", tmp_path / "w.yaml", "--explain", "1")
    assert explained.exit_code == 0, explained.output
    lines = [" ".join(line.split()) for line in explained.stdout.splitlines()]
    said = [line for line in lines if "restart" in line and not line.startswith("expected")]
    assert said == [f"start and restarts: none ({LEFT_OUT}); on a cloud launcher {counted}"]
    assert sum(line.count("left out") for line in lines if not
               line.startswith("expected")) == 0, lines  # (its formula says 'start left out')
