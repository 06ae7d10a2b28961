"""`costsched daemon`: the scheduled optimizer (collect, re-plan, refresh the catalog)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from costsched import config as config_module
from costsched import daemon as scheduled
from costsched.cli.common import JsonOption, console, friendly_errors, print_json, printable
from costsched.redact import redact
from costsched.service.stores import open_store


@friendly_errors
def daemon(
    config: Annotated[Path | None, typer.Option(
        "--config", help="The TOML config file (default: $COSTSCHED_CONFIG, else config.toml "
        "in the user config directory).", show_default=False)] = None,
    once: Annotated[bool, typer.Option(
        "--once", help="Run each task that is due one time, then exit (for cron). Exit code 0 "
        "when every task ran (one that partly failed, e.g. some regions, is logged as a "
        "warning); 1 when a task failed, e.g. every price source failed.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Run the scheduled optimizer: collect prices, re-plan running jobs and migrate where
    the policy says so, refresh the on-demand catalog, on the config's schedules. Stops on
    SIGTERM or SIGINT once the step in progress is done. Logs one logfmt line per event."""
    loaded = config_module.load(config)
    store = open_store(loaded.config.db, loaded.config.store)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    scheduled.log.addHandler(handler)
    scheduled.log.setLevel(logging.INFO)
    scheduled.log.propagate = False
    if not once:
        scheduled.Daemon(store, loaded.config).serve()
        return
    runs = scheduled.run_once(store, loaded.config)
    if json_out:
        print_json([{"task": r.task, "status": r.status, "started_at": r.started_at,
                     "finished_at": r.finished_at, "detail": redact(r.detail or "") or r.detail}
                    for r in runs])
        return
    if not runs:
        console.print("Nothing due.")
    for r in runs:
        console.print(printable(f"{r.task}: {r.status}" + (f": {redact(r.detail)}" if r.detail
                                                           else "")),
                      highlight=False, markup=False)
    if any(r.status == "failed" for r in runs):
        raise typer.Exit(1)
