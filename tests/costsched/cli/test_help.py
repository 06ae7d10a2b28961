"""Every command's --help shows flags as flags: no `<bool>` beside --json, --wide, --help;
shell completion is the root's option, not each command's. A number typer refuses is said
in costsched's words."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from costsched.cli import COMMANDS, app


def every_command() -> list[list[str]]:
    """Each command's argv, and each subcommand's of the groups."""
    out: list[list[str]] = [[]]
    for name, entry in COMMANDS.items():
        command = entry.load(name)
        subcommands = getattr(command, "commands", {})
        out.append([name])
        out.extend([name, sub] for sub in subcommands)
    return out


@pytest.mark.parametrize("argv", every_command(), ids=lambda a: " ".join(a) or "root")
def test_help_shows_no_bool_metavar(argv: list[str]) -> None:
    result = CliRunner().invoke(app, [*argv, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "--help" in result.output and "Show this message" in result.output
    assert "<bool>" not in result.output
    assert ("--install-completion" in result.output) == (argv == [])


@pytest.mark.parametrize(("argv", "said"), [
    (["plan", "job.yaml", "--top", "0"], "costsched plan: --top '0': expected at least 1"),
    (["plan", "job.yaml", "--top", "2.5"], "costsched plan: --top '2.5': expected a whole "
                                           "number"),
    (["plan", "job.yaml", "--budget", "5k"], "costsched plan: --budget '5k': expected an "
                                             "amount of USD, such as 50 or '$50'"),
    (["status", "--wait", "abc"], "costsched status: --wait 'abc': expected a number"),
    (["logs", "j", "--tail", "x"], "costsched logs: --tail 'x': expected a whole number"),
])
def test_a_number_refused_names_the_option_the_value_and_what_is_accepted(
        argv: list[str], said: str) -> None:
    result = CliRunner().invoke(app, argv, env={"COLUMNS": "200"}, prog_name="costsched")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"error: {said}; `costsched {argv[0]} --help` shows the usage"]


def test_a_budget_flag_takes_dollars_as_a_job_file_does() -> None:
    from costsched.cli.common import dollars

    assert [dollars(v) for v in ("5", "$5", " $1,200.50 ", 7)] == [5.0, 5.0, 1200.5, 7.0]
