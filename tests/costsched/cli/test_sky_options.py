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
