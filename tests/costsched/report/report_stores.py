"""Stores that between them fill every table of `costsched report` (moves, egress, a gang
with node gaps, estimates beside their runs, budgets, speeds, a job on an offering nobody
prices, a job never placed), and the outputs of `report` and `report --json` on each, as
the command writes them.

`python -m tests.costsched.report.report_stores` writes those outputs to `golden/`: the
files there were written by the code before the report moved onto plain rows (its frames),
and `test_row_outputs.py` asserts the report writes the same, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report import scenario
from tests.costsched.report.test_estimates import EAST, finish, planned_job
from tests.costsched.report.test_estimates import at as planned_at

GOLDEN = Path(__file__).with_name("golden")
FLEX = ("gcp", "us-central1", "us-central1-a", "a2-highgpu-1g", "flex_start", "linux")
NOBODY = ("aws", "eu-north-9", "eu-north-9a", "x9.nothing", "spot", "linux")


def _observe(store: PriceStore, key: tuple, gpu: str, when: datetime, usd: float) -> None:
    store.ingest(pd.DataFrame([(*key, gpu, 1, 8, 61.0, usd, pd.Timestamp(when), "test")],
                              columns=OBSERVATION_COLUMNS))


def moves_and_budgets(store: PriceStore) -> datetime:
    """The three jobs of `scenario` (a migration, a recovery, egress, budgets, speeds)."""
    scenario.fill(store)
    return scenario.at(scenario.NOW)


def estimates(store: PriceStore) -> datetime:
    """Jobs planned at launch that beat, met and missed their plans, one recovered on
    another region (egress), one with a budget it overran."""
    _observe(store, EAST, "V100", planned_at(-1), 1.0)
    finish(store, planned_job(store, "beat"), 8)
    finish(store, planned_job(store, "met", hours=7.0, usd=9.0), 10.2)
    slow = planned_job(store, "slow")
    store.jobs.end_placement(slow, planned_at(3))
    store.moves.create(slow, "recovery", [], at=planned_at(3), source_instance="slow-1",
                       detail="instance slow-1 preempted")
    west = ("aws", "us-west-2", "us-west-2b", "p3.2xlarge", "spot", "linux")
    _observe(store, west, "V100", planned_at(-1), 0.5)
    store.jobs.place(slow, west, gpu_model="V100", gpu_count=1, at=planned_at(3),
                     usd_per_hour=0.5, reason="recovery", instance="slow-2")
    store.jobs.record_step(slow, 18_000, at=planned_at(7))
    spec = {"name": "capped", "throughputs": {"V100": 1.0}, "steps": 36_000,
            "constraints": {"budget": 1.0}, "checkpoint": {"size_gb": 3}}
    capped = store.jobs.create("capped", {"spec": spec, "source": "test"}, 36_000,
                               at=planned_at(0))
    store.jobs.place(capped, EAST, gpu_model="V100", gpu_count=1, at=planned_at(0),
                     usd_per_hour=1.0, reason="launch", instance="capped-1")
    store.jobs.record_step(capped, 3600, at=planned_at(2))
    store.jobs.create("unplanned", {"spec": {"name": "unplanned"}, "source": "test"}, 10.0,
                      at=planned_at(0))
    return planned_at(11)


def gang_and_unpriced(store: PriceStore) -> datetime:
    """A flex-start gang of two nodes with node gaps over two days, and a job on an
    offering with no stored, listed or on-demand price (its baselines do not apply)."""
    t0 = datetime(2025, 2, 3, 22, 0, tzinfo=timezone.utc)

    def at(hours: float) -> datetime:
        return t0 + timedelta(hours=hours)

    _observe(store, FLEX, "A100", at(-1), 40.0)
    _observe(store, FLEX, "A100", at(3), 50.0)
    spec = {"name": "gang", "throughputs": {"A100": 2.0}, "steps": 100_000, "num_nodes": 2,
            "constraints": {"budget": 900.0}}
    gang = store.jobs.create("gang", {"spec": spec, "source": "test"}, 100_000, at=at(-1))
    store.jobs.place(gang, FLEX, gpu_model="A100", gpu_count=1, at=at(0), usd_per_hour=40.0,
                     reason="launch", instance="g", waiting=True)
    store.jobs.track_nodes(gang, "g", {0: at(1)}, 2, at(1 + 1 / 6))
    store.jobs.track_nodes(gang, "g", {0: at(1), 1: at(2)}, 2, at(2.5))
    store.jobs.track_nodes(gang, "g", {0: at(1)}, 2, at(4))
    store.jobs.track_nodes(gang, "g", {0: at(1), 1: None}, 2, at(5.5))
    store.jobs.record_step(gang, 30_000, at=at(7))
    store.jobs.end_placement(gang, at(7.25))
    store.jobs.transition(gang, "succeeded", at=at(7.25))
    spec = {"name": "nowhere", "throughputs": {"V100": 1.0}, "steps": 5000}
    nowhere = store.jobs.create("nowhere", {"spec": spec, "source": "test"}, 5000, at=at(0))
    store.jobs.place(nowhere, NOBODY, gpu_model="V100", gpu_count=1, at=at(0.5),
                     usd_per_hour=0.0123, reason="launch", instance="n-1")
    store.jobs.record_step(nowhere, 2000, at=at(2))
    store.jobs.end_placement(nowhere, at(2.75))
    store.jobs.create("never", {"spec": {"name": "never"}, "source": "test"}, 10.0, at=at(0))
    return at(9)


STORES: dict[str, Callable[[PriceStore], datetime]] = {
    "moves_and_budgets": moves_and_budgets, "estimates": estimates,
    "gang_and_unpriced": gang_and_unpriced,
}
# Per store, the reports asked of it besides the whole one: (label, extra arguments).
VARIANTS: dict[str, list[tuple[str, list[str]]]] = {
    "moves_and_budgets": [("since", ["--since", "2024-06-01T23:30:00Z"]),
                          ("job", ["--job", "alpha"])],
    "estimates": [("job", ["--job", "slow"])],
    "gang_and_unpriced": [("since", ["--since", "2025-02-04T01:00:00Z"])],
}


def outputs(name: str, url: str, html: bool = True) -> dict[str, str]:
    """{label: output} of `report` and `report --json` (and with `html`, of `report
    --html`) on store `name` made at `url`."""
    from costsched.cli import app, common

    store = PriceStore(url)
    until = STORES[name](store)
    store.engine.dispose()
    common.console.width = common.err_console.width = 200
    out = {"all.html": _html(url, until)} if html else {}
    for label, extra in [("all", []), *VARIANTS[name]]:
        for form, flags in (("text", []), ("json", ["--json"])):
            argv = ["report", "--db", url, "--until", until.isoformat(), *extra, *flags]
            result = CliRunner().invoke(app, argv)
            assert result.exit_code == 0, result.output
            out[f"{label}.{form}"] = result.stdout
    return out


def _html(url: str, until: datetime) -> str:
    """The report's HTML file, each chart (a PNG) named by its digest."""
    from costsched.cli import app

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.html"
        argv = ["report", "--db", url, "--until", until.isoformat(), "--html", str(path)]
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == 0, result.output
        text = path.read_text()
    return re.sub(r"base64,([A-Za-z0-9+/=]+)",
                  lambda m: "sha256:" + hashlib.sha256(m.group(1).encode()).hexdigest(), text)


def golden(name: str) -> dict[str, str]:
    return json.loads((GOLDEN / f"{name}.json").read_text())


def main(folder: str) -> None:
    GOLDEN.mkdir(exist_ok=True)
    for name in STORES:
        found = outputs(name, str(Path(folder) / f"{name}.sqlite"))
        (GOLDEN / f"{name}.json").write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
