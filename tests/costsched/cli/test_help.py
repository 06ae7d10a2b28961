"""Every command's --help shows flags as flags: no `<bool>` beside --json, --wide, --help."""

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
