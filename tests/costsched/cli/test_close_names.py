"""Only close names are offered ("did you mean ...?"), by one rule for every name typed:
a value of an option, a command, an option; and click's own words read as costsched's."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.model import SHOWN_STATES
from costsched.vocabulary import did_you_mean


def _line(*argv: str) -> str:
    result = CliRunner().invoke(app, list(argv), prog_name="costsched")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_name_far_from_the_typed_one_is_not_offered_beside_a_close_one() -> None:
    # 'pending' and 'launching' read somewhat alike to difflib, but are several slips away
    assert did_you_mean("runing", SHOWN_STATES) == "; did you mean 'running'?"
    assert did_you_mean("stauts", ["status", "start", "stop"]) == (
        "; did you mean 'status' or 'start'?")  # one slip more than the closest: offered


def test_a_state_misspelt_gets_the_close_state_only() -> None:
    assert _line("status", "--state", "runing").endswith("; did you mean 'running'?")


def test_a_misspelt_option_gets_the_close_option_only_in_costsched_s_words() -> None:
    assert _line("plan", "job.yaml", "--topp", "3") == (
        "error: costsched plan: no such option: --topp; did you mean '--top'? "
        "`costsched plan --help` shows the usage")


def test_an_option_like_none_gets_no_suggestion() -> None:
    assert _line("plan", "job.yaml", "--zzzz") == (
        "error: costsched plan: no such option: --zzzz; `costsched plan --help` shows "
        "the usage")


def test_a_misspelt_command_reads_the_same_way() -> None:
    assert _line("stopp") == ("error: no such command 'stopp'; did you mean "
                              "'stop'? `costsched --help` shows the usage")
    assert _line("daemon", "statu").startswith(
        "error: costsched daemon: no such command 'statu'; did you mean 'status'")
    assert _line("jobs").startswith(  # another tool's name for a command
        "error: no such command 'jobs'; did you mean `costsched status`?")


@pytest.mark.parametrize(("typed", "meant"), [
    (("jobs", "launch", "task.yaml"), "`costsched launch JOB.yaml`"),
    (("jobs", "queue"), "`costsched status`"), (("jobs", "cancel", "3"), "`costsched stop JOB`"),
    (("jobs", "logs", "3"), "`costsched logs JOB`")])
def test_skypilots_managed_jobs_commands_name_costscheds(typed: tuple, meant: str) -> None:
    """`sky jobs launch` typed as `costsched jobs launch`: the command that launches."""
    assert _line(*typed).startswith(f"error: no such command 'jobs'; did you mean {meant}?")
