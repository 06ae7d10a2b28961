"""A command or a script given where a job file goes: the words say a job is a YAML file,
and the shell line they give writes the smallest job that runs it, as a job file reads."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.smallest_job import smallest_job
from costsched.taskfile import load

_LINE = re.compile(r"`(printf .+? > (\S+))` writes it; give (\S+) instead$")


def _written(said: str, folder: Path) -> tuple[Path, str]:
    """The file the line `said` gives writes, run by a shell in `folder`, and its name."""
    found = _LINE.search(said)
    assert found is not None, said
    line, file, given = found.groups()
    assert file == given
    subprocess.run(["bash", "-c", line], cwd=folder, check=True)
    return folder / file, file


@pytest.mark.parametrize("command", ["python train.py", "python train.py --lr 0.1 # try",
                                     "python -c 'print(1)'", "echo a: b"])
def test_the_line_given_writes_a_job_that_runs_the_command(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    said = smallest_job(command)
    assert said.startswith("a job is a YAML file (a costsched job or a SkyPilot task), "
                           "not a command; ")
    path, _ = _written(said, tmp_path)
    [spec] = load(path)
    assert spec.run.strip() == command and spec.workdir == str(tmp_path)


def test_the_line_never_writes_over_a_file(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.yaml").write_text("kept")
    path, file = _written(smallest_job("python train.py"), tmp_path)
    assert file == "job.yaml" and (tmp_path / "train.yaml").read_text() == "kept"
    assert load(path)[0].name == "train"


def test_launch_of_a_command_says_a_job_is_a_file_and_which_to_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`costsched launch 'python train.py'`, as `sky launch` runs a command."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["launch", "python train.py"])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("error: python train.py: no such file: a job is a YAML file")
    path, _ = _written(line, tmp_path)
    assert load(path)[0].run == "python train.py"


def test_a_script_given_as_the_job_file_gets_the_job_that_runs_it_in_its_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "train.py").write_text("import os\n\nprint(os.getcwd())\n")
    result = CliRunner().invoke(app, ["plan", "scripts/train.py"])
    assert result.exit_code == 2, result.output
    [line] = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert line.startswith("error: scripts/train.py: not a job file (a .py file): a job is a "
                           "YAML file (a costsched job or a SkyPilot task), not a script; ")
    [spec] = load(_written(line, tmp_path)[0])
    assert spec.run == "python train.py"
    assert spec.workdir == str(tmp_path / "scripts")
