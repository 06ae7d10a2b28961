"""The CLI starts without its heavy libraries: each command imports what it needs when it
runs, and the root's help lists every command from the registry."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from costsched.cli import COMMANDS, app

HEAVY = ("pandas", "matplotlib", "cvxpy", "sqlalchemy")


def loaded_after(code: str) -> list[str]:
    """The heavy top-level packages loaded in a fresh interpreter after `code`."""
    probe = (f"{code}\nimport sys\n"
             f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})),"
             " file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return out.stderr.split()


def test_importing_the_cli_loads_no_heavy_library() -> None:
    assert loaded_after("import costsched.cli") == []


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_help_and_version_load_no_heavy_library(argv: list[str]) -> None:
    code = ("import sys\nfrom costsched.cli import app\n"
            f"try:\n    app({argv!r})\nexcept SystemExit:\n    pass")
    assert loaded_after(code) == []


def test_root_help_lists_every_command_with_its_help() -> None:
    out = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    for name, entry in COMMANDS.items():
        assert name in out
        assert entry.help.split(",")[0] in out  # the start of its one-line help


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_registry_help_is_the_commands_own(name: str) -> None:
    """The help shown without importing a command is its docstring's first paragraph."""
    command = COMMANDS[name].load(name)
    own = " ".join((command.help or "").split("\n\n")[0].split())
    assert COMMANDS[name].help == own


def test_a_mistyped_command_is_answered_with_the_close_one() -> None:
    result = CliRunner().invoke(app, ["catalg"], prog_name="costsched")
    assert result.exit_code == 2
    assert result.output == ("error: no such command 'catalg'; did you mean "
                             "'catalog'? `costsched --help` shows the usage\n")


@pytest.mark.parametrize(("argv", "says"), [
    (["plan", "job.yaml", "--tpo", "3"],
     "error: costsched plan: no such option: --tpo; did you mean '--top'? "
     "`costsched plan --help` shows the usage"),
    (["plan", "job.yaml", "--top", "abc"],
     "error: costsched plan: --top 'abc': expected a whole number; "),
    (["prices", "history", "--instnace", "x"],
     "error: costsched prices history: no such option: --instnace"),
    (["plan"], "error: costsched plan: missing argument 'jobs'; "),
    (["--json", "plan", "job.yaml"],
     "a command's options follow its name (`costsched COMMAND ... --json`)"),
    (["daemon", "statu"], "error: costsched daemon: no such command 'statu'; did you mean "
     "'status'? `costsched daemon --help` shows the usage"),
    (["stauts"], "no such command 'stauts'; did you mean 'status' or 'start'? `"),
])
def test_a_usage_mistake_is_one_line(argv: list[str], says: str) -> None:
    """A mistyped option, value or command is one line on stderr naming the command and
    its help, exit code 2, as every other bad input is; no box, no usage dump."""
    result = CliRunner().invoke(app, argv, prog_name="costsched")
    assert result.exit_code == 2
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    # A command's mistake is led by its name; the root's by the words alone.
    assert says in line and line.startswith("error: costsched" if argv[0] in COMMANDS
                                            else "error: ") and ": costsched:" not in line, line
