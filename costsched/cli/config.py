"""`costsched config show`: the effective configuration and where each value came from."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from costsched.cli.common import JsonOption, console, friendly_errors, print_json, table
from costsched.config import ENV_CONFIG, load

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", help=f"The TOML config file (default: ${ENV_CONFIG}, else "
                 "config.toml in the user config directory).", show_default=False),
]

app = typer.Typer(help="The configuration file and its COSTSCHED_* overrides.",
                  no_args_is_help=True)


@app.command("show")
@friendly_errors
def show(config: ConfigOption = None, json_out: JsonOption = False) -> None:
    """The effective configuration: each key, its value and where it came from."""
    loaded = load(config)
    rows = loaded.rows()
    if json_out:
        print_json({"file": str(loaded.path), "read": loaded.read,
                    "values": {key: {"value": value, "from": source}
                               for key, value, source in rows}})
        return
    state = "" if loaded.read else " (not found: defaults)"
    console.print(table(f"Configuration from {loaded.path}{state}", ["key", "value", "from"],
                        [[key, _text(key, value), source] for key, value, source in rows]),
                  soft_wrap=False)


def _text(key: str, value: Any) -> str:
    if key == "db" and value is None:
        return "(default store)"
    if key in ("collect.clouds", "collect.regions") and value == []:
        return "(all)"
    if key == "migration.lost_work_minutes" and value is None:
        return "(half the checkpoint interval)"
    if value is None:
        return "-"
    if isinstance(value, list):
        return shlex.join(value) if key == "notify.command" else ", ".join(map(str, value))
    if isinstance(value, dict):  # budgets.named: name: its settings
        return "; ".join(f"{k}: {v.model_dump() if hasattr(v, 'model_dump') else v}"
                         for k, v in value.items()) or "-"
    return str(value)
