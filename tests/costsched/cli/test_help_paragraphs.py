"""Every command's --help reads its paragraphs as paragraphs at any terminal width: a
paragraph's lines are filled to the width, never broken where its source line ended (a
line of one or two words inside a paragraph, "starts likewise, / to do / the rest")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer import _click as click
from typer.core import TyperGroup
from typer.main import get_command
from typer.testing import CliRunner

from costsched.cli import app

BOXES = ("│", "╭", "╰")


def _commands(group: TyperGroup, path: list[str]) -> Iterator[list[str]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        yield [*path, name]
        if isinstance(command, TyperGroup):
            yield from _commands(command, [*path, name])


def _help(path: list[str], width: int) -> list[str]:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def _broken(lines: list[str], width: int) -> list[str]:
    """The lines of one or two words between two lines of the same paragraph, outside the
    option boxes (whose cells rich fills itself), that the next line's first word would
    have fitted on: a line ended where its source line did, not where the width is."""
    return [lines[i] for i in range(1, len(lines) - 1)
            if not any(line.lstrip().startswith(BOXES) for line in lines[i - 1:i + 2])
            and all(line.strip() for line in lines[i - 1:i + 2])
            and len(lines[i].split()) <= 2 and "Usage:" not in lines[i - 1]
            and len(lines[i].rstrip()) + 1 + len(lines[i + 1].split()[0]) < width]


@pytest.mark.parametrize("width", [60, 80, 100])
def test_no_help_breaks_a_paragraph_mid_line(width: int) -> None:
    paths = list(_commands(get_command(app), []))
    assert ["start"] in paths and ["daemon", "install"] in paths  # every level looked at
    broken = {" ".join(path): said for path in paths
              if (said := _broken(_help(path, width), width))}
    assert broken == {}


def test_start_help_says_its_second_paragraph_as_one() -> None:
    text = " ".join(line.strip() for line in _help(["start"], 80))
    assert ("A job that ended short of its declared steps (exited 0 early) starts likewise, "
            "to do the rest of them. The job's cost so far is kept and the new run's charges "
            "add to it. Its secrets' values come from --secret or your environment, as at "
            "launch.") in text
    lines = [line.strip() for line in _help(["start"], 80)]
    assert "to do" not in lines and "to it." not in lines
