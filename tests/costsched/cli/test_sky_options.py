"""An option of `sky launch` given to `costsched plan` or `launch` (`--gpus A10G:1`, `-y`)
says what costsched reads or does instead, in one line, not only "no such option"."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from costsched.cli import app


def _line(*argv: str) -> str:
    result = CliRunner().invoke(app, list(argv), prog_name="costsched")
    assert result.exit_code == 2
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("error: costsched ") and "no such option" not in line, line
    return line


@pytest.mark.parametrize("command", ["plan", "launch"])
def test_gpus_names_the_fields_that_say_the_gpus(command: str) -> None:
    line = _line(command, "task.yaml", "--gpus", "A10G:1")
    assert line.startswith(f"error: costsched {command}: --gpus is an option of `sky "
                           "launch`; costsched reads the GPUs from the job file: "
                           "resources.accelerators in a SkyPilot task"), line
    assert "constraints.gpu_models and gpu_counts in a costsched job" in line


@pytest.mark.parametrize("option", ["--use-spot", "--cloud=gcp", "--region", "--zone",
                                    "--infra", "--instance-type", "-t", "--num-nodes",
                                    "--image-id", "--disk-size", "-c", "--cluster", "-n"])
def test_a_placement_option_names_the_job_files_field(option: str) -> None:
    line = _line("launch", "task.yaml", option, "x")
    assert f": {option.partition('=')[0]} is an option of `sky launch`; costsched " in line


def test_where_it_runs_may_also_be_one_offering_named_at_launch() -> None:
    assert ("; `costsched launch JOB.yaml --offering LABEL` runs it on one offering of its "
            "plan (`costsched plan JOB.yaml` lists their labels); `costsched plan --help`"
            ) in _line("plan", "t.yaml", "--cloud", "gcp")
    assert "resources.use_spot in a SkyPilot task, constraints.markets" in _line(
        "plan", "t.yaml", "--use-spot")


@pytest.mark.parametrize(("option", "says"), [
    ("-y", "costsched launch asks nothing before it launches"),
    ("--detach-run", "costsched launch returns once the job runs, or after --wait seconds"),
    ("-d", "`costsched logs JOB --follow` shows its output"),
    ("--down", "costsched terminates a job's instances once the job ends"),
    ("-i", "so none is left to idle"),
])
def test_a_flag_without_an_equivalent_says_what_launch_does(option: str, says: str) -> None:
    line = _line("launch", "task.yaml", option)
    assert f": {option} is an option of `sky launch`; costsched " in line, line
    assert says in line, line
    assert line.endswith("; `costsched launch --help` shows the usage")
    assert "costsched plan launches nothing; costsched launch asks nothing" in _line(
        "plan", "task.yaml", "--yes")


def test_a_misspelt_option_still_gets_the_close_ones() -> None:
    result = CliRunner().invoke(app, ["launch", "t.yaml", "--secrte", "A"],
                                prog_name="costsched")
    assert "no such option: --secrte" in result.stderr and "--secret" in result.stderr
    other = CliRunner().invoke(app, ["status", "--gpus", "A10G:1"], prog_name="costsched")
    assert "no such option: --gpus" in other.stderr  # a command that takes no job file


def test_dry_run_spelt_as_migrate_spells_it_gets_the_dryrun_answer() -> None:
    assert _line("launch", "task.yaml", "--dry-run") == (
        "error: costsched launch: --dry-run: `sky launch` calls it --dryrun, and costsched "
        "launch has none; `costsched plan JOB.yaml` shows where a job would run and at what "
        "cost; `costsched launch --help` shows the usage")
    assert _line("plan", "task.yaml", "--dry-run").startswith(
        "error: costsched plan: --dry-run: costsched plan launches nothing: it shows where")


@pytest.mark.parametrize(("argv", "says"), [
    (["--env-file", ".env"], "costsched reads no env file: give each env with --env "
                             "NAME=VALUE, or --env NAME to take its value from your shell"),
    (["--async"], "(--wait 0: at once), and the job goes on"),
    (["-s"], "costsched runs the task's setup on each instance before its run"),
    (["--no-setup"], "costsched runs the task's setup on every new instance"),
    (["--fast"], "with no cluster to reuse"),
    (["--job-recovery", "FAILOVER"], "is an option of `sky jobs launch`; costsched reads it "
                                     "from the SkyPilot task's resources.job_recovery"),
])
def test_more_launch_options_say_what_costsched_does(argv: list[str], says: str) -> None:
    line = _line("launch", "task.yaml", *argv)
    assert says in line, line
    assert "did you mean" not in line


def test_a_short_option_is_never_offered_an_argument_as_a_close_one() -> None:
    result = CliRunner().invoke(app, ["fetch", "-f"], prog_name="costsched")
    assert "no such option: -f; `costsched fetch --help`" in result.stderr, result.stderr
