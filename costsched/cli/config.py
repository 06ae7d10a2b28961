"""`costsched config show`: the effective configuration and where each value came from."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from costsched.cli.common import JsonOption, console, friendly_errors, print_json, table
from costsched.config import DURATION_UNITS, ENV_CONFIG, duration_text, load

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
                    "values": {key: {"value": value,
                                     **({"unit": DURATION_UNITS[key]}
                                        if key in DURATION_UNITS else {}),
                                     "from": source}
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
    if key in DURATION_UNITS and isinstance(value, (int, float)):
        return duration_text(float(value), DURATION_UNITS[key])
    if isinstance(value, list):
        return shlex.join(value) if key == "notify.command" else ", ".join(map(_toml, value))
    if isinstance(value, dict):  # budgets.named: name: its settings
        return "; ".join(f"{k}: {_toml(v.model_dump() if hasattr(v, 'model_dump') else v)}"
                         for k, v in value.items()) or "-"
    return _toml(value)


def _toml(value: Any) -> str:
    """A value as the config file writes it: true, false, 50.0, a table as {usd = 50.0,
    labels = {}}; '-' where it is unset. Text stays bare at the top of a cell."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_inner(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inner(v) for v in value) + "]"
    return str(value)


def _inner(value: Any) -> str:
    """A value inside a table or list: text quoted, as TOML writes it ('"total"')."""
    return json.dumps(value) if isinstance(value, str) else _toml(value)
