"""The files a task names are checked once, as it is read: `plan` refuses a missing workdir
or local mount as `launch` does; on the local launcher both say, in one line per mount,
that a file mount is not placed at its path."""

from __future__ import annotations

from pathlib import Path

import pytest

TASK = ("name: mf\nresources: {accelerators: L4:1}\nrun: ls /data\n"
        "costsched: {model: ResNet-50 (batch size 64), steps: 100}\n")


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("command", ["plan", "launch"])
def test_a_missing_workdir_or_mount_is_refused_by_plan_as_by_launch(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
        command: str) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path = tmp_path / "bad.yaml"
    path.write_text(TASK + "workdir: ./nope\n")
    result = cli(command, path, *(["--wait", "0"] if command == "launch" else []))
    assert result.exit_code == 2, result.output
    assert _words(result.output) == _words(
        f"error: {path}: field workdir './nope': no such directory (relative to the file's "
        f"folder, {tmp_path})")
    path.write_text(TASK + "file_mounts: {/data: ./data}\n")
    result = cli(command, path, *(["--wait", "0"] if command == "launch" else []))
    assert result.exit_code == 2, result.output
    assert _words(result.output) == _words(
        f"error: {path}: field file_mounts./data: local path './data': no such file or "
        f"folder (relative to the file's folder, {tmp_path})")


def test_plan_on_the_local_launcher_says_where_a_file_mount_goes(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    instances = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(instances))
    (tmp_path / "data").mkdir()
    path = tmp_path / "job.yaml"
    path.write_text(TASK + "file_mounts: {/data: ./data}\n")
    result = cli("plan", path)
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "file_mounts" in line]
    assert said == [
        f"warning: {path}: file_mounts /data: the local launcher does not place it at /data "
        f"but under its instance's folder ({instances}/JOB-ATTEMPT/mounts/data); the job "
        "reads it as $COSTSCHED_MOUNTS/data, which is /data on a cloud (a job reading /data "
        "finds nothing there)"]
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "aws")
    assert "file_mounts /data" not in cli("plan", path).stderr


def test_launch_on_the_local_launcher_says_where_a_file_mount_goes(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from costsched.cli.launch_given import local_mount_warnings
    from costsched.taskfile import read_jobs

    (tmp_path / "data").mkdir()
    path = tmp_path / "job.yaml"
    path.write_text(TASK + "file_mounts: {/data: ./data}\n")
    read = read_jobs([path])
    assert local_mount_warnings(read, tmp_path / "i") == [  # (say_warning adds "warning: ")
        f"{path}: file_mounts /data: the local launcher does not place it at /data but "
        f"under its instance's folder ({tmp_path}/i/JOB-ATTEMPT/mounts/data); the job reads "
        "it as $COSTSCHED_MOUNTS/data, which is /data on a cloud (a job reading /data finds "
        "nothing there)"]
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    result = cli("launch", path, "--wait", "0", "--launcher", "local")
    assert "file_mounts /data: the local launcher does not place it at /data" in \
        _words(result.stderr), result.output
