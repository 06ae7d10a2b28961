"""`logs NAME` when several jobs have that name: the output shown is one job's, and a line
on stderr says which (its id) and how to see another's (`logs ID`)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app
from tests.costsched.cli.test_look import env, finished_job  # noqa: F401 - fixture by name


def test_logs_of_a_shared_name_say_whose_output_it_is(env, tmp_path: Path) -> None:  # noqa: ANN001, F811
    db = env["COSTSCHED_DB"]
    first = finished_job(db, tmp_path / "instances")
    second = finished_job(db, tmp_path / "instances")
    (tmp_path / "instances" / f"{second}-1" / "job.log").write_text("newest\n")
    result = CliRunner().invoke(app, ["logs", "hello"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "newest\n"
    assert result.stderr == (f"2 jobs are named hello: this is job {second}'s output (the "
                             f"newest); `costsched logs {first}` shows job {first}'s\n"
                             f"--- instance {second}-1\n")


def test_logs_of_a_job_by_id_or_its_own_name_say_only_its_instance(env, tmp_path: Path  # noqa: ANN001, F811
                                                                  ) -> None:
    db = env["COSTSCHED_DB"]
    first = finished_job(db, tmp_path / "instances")
    finished_job(db, tmp_path / "instances", name="other")
    for named in (str(first), "hello"):
        result = CliRunner().invoke(app, ["logs", named, "--tail", "1"])
        assert (result.exit_code, result.stdout, result.stderr) == (
            0, "three\n", f"--- instance {first}-1\n")


def test_logs_of_a_name_three_jobs_share_list_the_others(env, tmp_path: Path) -> None:  # noqa: ANN001, F811
    db = env["COSTSCHED_DB"]
    ids = [finished_job(db, tmp_path / "instances") for _ in range(3)]
    result = CliRunner().invoke(app, ["logs", "hello", "--all"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        f"3 jobs are named hello: this is job {ids[2]}'s output (the newest); `costsched "
        f"logs ID` shows another's: job {ids[1]} (succeeded), job {ids[0]} (succeeded)")
