"""A command group run without its subcommand (`costsched prices`) shows its help, then one
line naming what is missing and every subcommand it takes, exit code 2: never an empty
error."""

from __future__ import annotations

from typer.testing import CliRunner

from costsched.cli import app
from tests.costsched.cli.test_hints import every_command, root


def groups() -> list[tuple[tuple[str, ...], list[str]]]:
    """Every group that needs a subcommand, with the subcommands it lists."""
    found = [((), root().list_commands(None))]  # type: ignore[arg-type]
    for path, command in every_command():
        if getattr(command, "no_args_is_help", False) and hasattr(command, "list_commands"):
            found.append((path, command.list_commands(None)))  # type: ignore[attr-defined]
    return found


def test_every_group_without_its_subcommand_names_them_in_one_line() -> None:
    checked = []
    for path, names in groups():
        result = CliRunner().invoke(app, list(path), prog_name="costsched")
        where = " ".join(("costsched", *path))
        assert result.exit_code == 2, where
        assert "Usage:" in result.stdout, where  # the group's help, as asked for
        [line] = result.stderr.splitlines()
        sub = "sub" if path else ""
        lead = f"{where}: " if path else ""  # the root's said without its name
        assert line == (f"error: {lead}missing a {sub}command: one of {', '.join(names)}; "
                        f"`{where} --help` shows the usage"), line
        checked.append(path[0] if path else "")
    assert {"", "prices", "throughput", "risk", "config", "bills"} <= set(checked)


def test_an_options_missing_value_names_what_it_takes_and_its_commands_help() -> None:
    """The option's help says what it takes, its first sentence (not cut at 'e.g.')."""
    for argv, command, takes in (
            (["plan", "job.yaml", "--explain"], "plan",
             "An offering's row number in the plan's table (1) or its label as ranked "
             "('aws us-east-1a p3.2xlarge spot')"),
            (["report", "--since"], "report", "Start of the period (ISO 8601, e.g. "
             "2024-06-01)")):
        result = CliRunner().invoke(app, argv, prog_name="costsched")
        option = argv[-1]
        assert result.exit_code == 2
        assert result.stderr.strip() == (
            f"error: costsched {command}: option '{option}' requires an argument ({takes}); "
            f"`costsched {command} --help` shows the usage"), result.stderr
        assert CliRunner().invoke(app, [command, "--help"]).exit_code == 0  # the hint works
