"""`plan` on a configuration whose launcher boots no instance (the local one) says that its
hours and totals count a cloud's first start, which `launch` there, its budget and deadline
checks too, leaves out; on a cloud's launcher it says nothing of it."""

from __future__ import annotations

from pathlib import Path

import pytest

JOB = "name: w\nrun: 'true'\nthroughputs: {L4: 30}\nsteps: 2500\nconstraints: {gpu_models: [L4]}\n"


def _notes(result) -> list[str]:  # noqa: ANN001
    return [" ".join(line.split()) for line in ("\n" + result.stderr).split("\nnote: ")[1:]]


def test_the_local_launcher_s_plan_says_the_start_it_counts_launch_leaves_out(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    (tmp_path / "w.yaml").write_text(JOB)
    planned = cli("plan", tmp_path / "w.yaml")
    assert planned.exit_code == 0, planned.output
    [note] = [n for n in _notes(planned) if "leaves it out" in n]
    assert note == (
        "job w: hours and totals count a cloud's first start 0.25 h: 10 min boot and set-up "
        "([migration] restart_minutes) + 5 min warm-up ([migration] warmup_minutes); `launch` "
        "on the local launcher (launch.launcher) leaves it out, as do its budget and deadline "
        "checks: the local launcher boots no instance, and the job's setup is in its billed "
        "hours"), planned.stderr


def test_a_cloud_launcher_s_plan_says_nothing_of_it(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "gcp")
    (tmp_path / "w.yaml").write_text(JOB)
    planned = cli("plan", tmp_path / "w.yaml")
    assert planned.exit_code == 0, planned.output
    assert "leaves it out" not in planned.stderr


def test_a_no_plan_the_start_plays_no_part_in_says_nothing_of_it(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    (tmp_path / "w.yaml").write_text(JOB.replace("[L4]}", "[L4], regions: [ap-south-1]}"))
    planned = cli("plan", tmp_path / "w.yaml")
    assert "no plan" in planned.output and "ap-south-1" in planned.output, planned.output
    assert "leaves it out" not in planned.output


def test_a_deadline_refused_for_its_start_says_launch_here_leaves_it_out(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    (tmp_path / "w.yaml").write_text(JOB.replace("[L4]}", "[L4], deadline: 0.1h}"))
    planned = cli("plan", tmp_path / "w.yaml")
    text = " ".join(planned.output.split())
    assert "cannot meet its deadline of 0.1 h" in text and "h to start)" in text, text
    assert "`launch` on the local launcher (launch.launcher) leaves it out" in text


def test_plan_json_carries_it_as_a_field_not_a_note(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    import json

    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    (tmp_path / "w.yaml").write_text(JOB)
    planned = cli("plan", tmp_path / "w.yaml", "--json")
    assert planned.exit_code == 0 and "leaves it out" not in planned.stderr
    [job] = json.loads(planned.stdout)["jobs"]
    assert job["start_left_out_at_launch"] == (
        "the local launcher boots no instance, and the job's setup is in its billed hours")
    assert job["start_hours"] == 0.25
