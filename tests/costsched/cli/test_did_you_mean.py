"""A value that is close to an accepted one gets a did-you-mean wherever it is typed: a job
file's name, --objective, a GPU model written with letters for digits, a command other
tools name differently, and a command's option written in a job file."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.vocabulary import did_you_mean

TASK = "resources:\n  accelerators: V100:1\nrun: python train.py\n"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("mf-spot.yaml", "mf-spot2.yaml", "mf-cap.yaml", "mf-budget.yaml"):
        (tmp_path / name).write_text(TASK)
    (tmp_path / "mf.py").write_text("")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", [["plan"], ["launch"]])
def test_a_job_file_that_is_not_there_names_the_close_files_of_its_folder(
        cli, folder: Path, command: list[str]) -> None:  # noqa: ANN001
    result = cli(*command, "mf-spt.yaml")
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        "error: mf-spt.yaml: no such file; did you mean 'mf-spot.yaml' or 'mf-spot2.yaml'?")


def test_the_suggested_file_is_written_as_the_path_was(cli, folder: Path) -> None:  # noqa: ANN001
    given = f"{folder.name}/mf-bugdet.yaml"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder.parent)
        result = cli("plan", given)
    assert f"did you mean '{folder.name}/mf-budget.yaml'" in result.output
    # no extension, or the other one: the file of that name
    assert "did you mean 'mf-spot.yaml'?" in cli("plan", "mf-spot").output
    assert "did you mean 'mf-spot.yaml'?" in cli("plan", "mf-spot.yml").output


def test_a_folder_that_is_not_there_is_named_with_the_close_ones(cli, folder: Path) -> None:  # noqa: ANN001
    (folder / "proj").mkdir()
    result = cli("plan", "prj/mf-spot.yaml")
    assert "prj/mf-spot.yaml: no such file (no folder prj; did you mean 'proj'?)" in (
        result.output)


def test_a_name_like_none_gets_no_suggestion(cli, folder: Path) -> None:  # noqa: ANN001
    result = cli("plan", "zzz.yaml")
    assert result.output.strip().splitlines()[-1] == "error: zzz.yaml: no such file"


@pytest.mark.parametrize(("typed", "meant"), [("cheap", "cost"), ("cheapest", "cost"),
                                              ("fastest", "time")])
def test_an_objective_said_in_other_words_gets_the_one_it_means(
        cli, folder: Path, typed: str, meant: str) -> None:  # noqa: ANN001
    result = cli("plan", "mf-spot.yaml", "--objective", typed)
    assert result.exit_code == 2
    assert f"--objective '{typed}': expected one of cost, time, tradeoff, " \
           f"throughput-per-dollar; did you mean '{meant}'?" in result.output


@pytest.mark.parametrize("typed", ["V1OO", "V10O", "v1oo"])
def test_a_gpu_written_with_letters_for_digits_gets_a_did_you_mean(
        cli, folder: Path, typed: str) -> None:  # noqa: ANN001
    for args in (["gpus", typed], ["catalog", "--gpu", typed]):
        result = cli(*args)
        assert result.exit_code == 2, args
        assert result.output.strip().endswith("did you mean 'V100'?"), (args, result.output)
    (folder / "tp.yaml").write_text(
        f"name: tp\nresources:\n  accelerators: V100:1\nrun: python mf.py\n"
        f"costsched:\n  steps: 1000\n  throughputs: {{{typed}: 10}}\n")
    result = cli("plan", "tp.yaml")
    assert "field costsched.throughputs: unknown GPU model" in result.output
    assert result.output.strip().endswith("did you mean 'V100'?")


def test_look_alike_characters_match_only_the_name_they_spell() -> None:
    assert did_you_mean("B2OO", ["B200", "H200", "A100"]) == "; did you mean 'B200'?"
    assert did_you_mean("I4", ["L4", "T4", "A10"]) == "; did you mean 'L4'?"
    assert did_you_mean("Q7", ["V100", "T4"]) == ""


@pytest.mark.parametrize(("typed", "meant"), [
    ("budgets", "`costsched status` (its budgets table; --budget NAME: the jobs of one "
                "budget) or `costsched report`"),
    ("budget", "`costsched status`"), ("jobs", "`costsched status`"),
    ("spend", "`costsched report`")])
def test_a_command_named_as_other_tools_name_it_points_to_ours(
        cli, typed: str, meant: str) -> None:  # noqa: ANN001
    result = cli(typed)
    assert result.exit_code == 2
    line = result.output.strip()
    assert f"no such command '{typed}'; did you mean {meant}" in line
    assert "Traceback" not in line and len(line.splitlines()) == 1


def test_a_command_misspelt_still_gets_the_close_commands(cli) -> None:  # noqa: ANN001
    assert "did you mean 'status' or 'start'?" in cli("stauts").output


def test_an_option_written_in_a_task_file_names_the_option(cli, folder: Path) -> None:  # noqa: ANN001
    (folder / "obj.yaml").write_text(TASK + "costsched:\n  objective: cheapest\n")
    result = cli("plan", "obj.yaml")
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        "error: obj.yaml: field costsched.objective: unknown field: objective is a "
        "command's option, not a job file's: `costsched plan --objective "
        "cost|time|tradeoff|throughput-per-dollar`")
    (folder / "own.yaml").write_text("name: own\nmodel: A3C\nsteps: 10\nquota: 2\n")
    assert "field quota: unknown field: quota is a command's option, not a job file's: " \
           "`costsched plan --quota N`" in cli("plan", "own.yaml").output


def test_of_names_alike_the_fewest_slips_away_comes_first(cli, folder: Path) -> None:  # noqa: ANN001
    # 'us-west-1' reads as alike as 'us-east-1' to difflib; a swap is one slip, not two.
    regions = ["us-west-2", "us-west-1", "us-east-2", "us-east-1"]
    assert did_you_mean("us-esat-1", regions) == (
        "; did you mean 'us-east-1' or 'us-west-1' or 'us-east-2'?")
    assert did_you_mean("us-wset-1", regions).startswith("; did you mean 'us-west-1'")
    (folder / "esat.yaml").write_text(
        "name: esat\nresources:\n  accelerators: T4:1\n  infra: aws/us-esat-1\nrun: echo\n")
    line = cli("plan", "esat.yaml").output.strip().splitlines()[-1]
    assert "'us-esat-1': not a region of aws; did you mean 'us-east-1' or" in line
