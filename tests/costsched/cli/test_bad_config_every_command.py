"""Every command refuses a bad configuration file the same way, before it does anything:
one line on stderr naming the file and the bad key, exit code 2, whatever the command
(one that reads no setting of it too: a typo there would else go unnoticed until another
command trips on it). Its help still shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import COMMANDS, app


def _paths() -> list[list[str]]:
    """Every command and subcommand, as typed (`daemon status`), from the registry."""
    out = []
    for name, entry in COMMANDS.items():
        command = entry.load(name)
        subcommands = getattr(command, "commands", {})
        if not (subcommands and getattr(command, "no_args_is_help", False)):
            out.append([name])  # (a group that only shows its help: below)
        out.extend([name, sub] for sub in sorted(subcommands))
    return out


PATHS = _paths()


@pytest.fixture()
def bad_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default config file ($XDG_CONFIG_HOME/costsched/config.toml) with a misspelt
    section."""
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv("COSTSCHED_CONFIG", raising=False)
    monkeypatch.setenv("COSTSCHED_DB", str(tmp_path / "none.sqlite"))
    from costsched.config import default_path

    path = default_path()
    path.parent.mkdir(parents=True)
    path.write_text("[deamon]\nwatch_seconds = 30\n")
    return path


def test_the_walk_finds_the_commands_and_their_subcommands() -> None:
    assert ["gpus"] in PATHS and ["catalog"] in PATHS and ["daemon", "status"] in PATHS
    assert ["prices", "show"] in PATHS and ["config", "show"] in PATHS


@pytest.mark.parametrize("argv", PATHS, ids=" ".join)
def test_every_command_refuses_a_bad_config_in_one_line(bad_config: Path,
                                                        argv: list[str]) -> None:
    result = CliRunner().invoke(app, argv, prog_name="costsched")
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {bad_config}: unknown section [deamon]: "), line
    assert "did you mean [daemon]?" in line


@pytest.mark.parametrize("argv", [["gpus", "--help"], ["catalog", "--help"],
                                  ["daemon", "status", "--help"], ["prices"], ["risk"]],
                         ids=" ".join)
def test_a_commands_help_shows_whatever_the_config(bad_config: Path, argv: list[str]) -> None:
    result = CliRunner().invoke(app, argv, prog_name="costsched")
    assert "unknown key" not in result.output
    assert "Usage" in result.stdout


def test_config_show_of_another_file_reads_that_one(bad_config: Path, tmp_path: Path) -> None:
    """`config show --config GOOD` shows the file it is given, not the default one's fault."""
    good = tmp_path / "good.toml"
    good.write_text("[policy]\nmargin = 0.3\n")
    result = CliRunner().invoke(app, ["config", "show", "--config", str(good), "--json"])
    assert result.exit_code == 0, result.output
    assert '"policy.margin": {"value": 0.3' in result.stdout.replace("\n", "").replace("  ", "")
