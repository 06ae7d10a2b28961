"""`logs JOB` names the instance whose output it shows, as `logs --all` heads each
instance's output: on stderr, so what goes to stdout stays the job's own
output (for a pipe or a file)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app
from tests.costsched.cli.test_look import env, finished_job  # noqa: F401 - fixture by name


def test_logs_of_a_job_name_its_instance_as_all_does(env, tmp_path: Path) -> None:  # noqa: ANN001, F811
    job = finished_job(env["COSTSCHED_DB"], tmp_path / "instances")
    every = CliRunner().invoke(app, ["logs", str(job), "--all"])
    assert every.exit_code == 0, every.output
    assert every.stdout.splitlines()[0].startswith(f"--- instance {job}-1 (")
    result = CliRunner().invoke(app, ["logs", str(job), "--tail", "1"])
    assert result.exit_code == 0, result.output
    assert (result.stdout, result.stderr) == ("three\n", f"--- instance {job}-1\n")
