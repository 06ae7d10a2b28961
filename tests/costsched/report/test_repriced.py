"""A placement re-priced by a later price import (charged from the stored prices of its
time at another hourly price on average than the one it was placed at) is said by the
report as `status` and the dashboard say it: a line in the text and the HTML file, a list
of such placements in --json; a placement whose price did not change has none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.report import build
from costsched.report.html import render
from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, GPU, WEST, at, observe

LINE = ("job {job}: launch on aws us-east-1a p3.2xlarge spot is charged from the stored "
        "prices of its time: $1.5000/h on average ($1.0000/h when placed)")


def _two_jobs(store: PriceStore) -> tuple[int, int]:
    """'moved' on EAST at $1.00/h from hour 0 to 2, 'steady' on WEST at $0.50/h as long:
    their prices as placed, the only ones stored."""
    observe(store, EAST, [(-10, 1.0)])
    observe(store, WEST, [(-10, 0.5)])
    ids = []
    for name, key, price in (("moved", EAST, 1.0), ("steady", WEST, 0.5)):
        spec = {"spec": {"name": name, "throughputs": {"V100": 2.0}, "steps": 1e6}}
        job = store.jobs.create(name, spec, 1e6, at=at(-1))
        store.jobs.place(job, key, gpu_model=GPU[key[3]], gpu_count=1, at=at(0),
                         usd_per_hour=price, reason="launch", instance=f"{name}-1")
        store.jobs.end_placement(job, at(2))
        ids.append(job)
    return ids[0], ids[1]


def test_a_placement_repriced_by_an_import_is_said_and_one_unchanged_is_not(
        tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite"
    store = PriceStore(str(db))
    moved, steady = _two_jobs(store)
    assert build(store, now=at(3)).rows["repriced"] == []  # nothing re-priced yet
    # An import, later, of EAST's price from hour 1: $2.00/h (WEST's unchanged)
    prices = tmp_path / "prices.csv"
    prices.write_text("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,"
                      "memory_gb,usd_per_hour,effective_at,source\n"
                      "aws,us-east-1,us-east-1a,p3.2xlarge,spot,linux,V100,1,8,61.0,2.0,"
                      f"{at(1):%Y-%m-%dT%H:%M:%SZ},mine\n")
    runner = CliRunner()
    done = runner.invoke(app, ["prices", "import", "--partial", str(prices), "--db", str(db)])
    assert done.exit_code == 0, done.output

    report = build(store, now=at(3))
    [row] = report.rows["repriced"]
    assert row["job_id"] == moved and row["placement_id"] is not None
    assert row["usd_per_hour"] == 1.0 and row["charged_usd_per_hour"] == 1.5
    assert row["usd"] / row["hours"] == 1.5  # its charged dollars over its hours
    line = LINE.format(job=moved)
    assert row["line"] == line
    assert f"job {steady}:" not in " ".join(r["line"] for r in report.rows["repriced"])
    assert f"<p>{line}</p>" in render(report)

    text = runner.invoke(app, ["report", "--until", at(3).isoformat(), "--db", str(db)],
                         env={"COLUMNS": "250"})
    assert text.exit_code == 0, text.output
    assert line in text.output and f"job {steady}: launch" not in text.output
    doc = json.loads(runner.invoke(app, ["report", "--until", at(3).isoformat(), "--json",
                                         "--db", str(db)]).output)
    assert [(r["job_id"], r["line"]) for r in doc["repriced"]] == [(moved, line)]

    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    spend = TestClient(create_app(store)).get("/spend", params={"until": at(3).isoformat()})
    assert spend.status_code == 200 and line in spend.text.replace("&#39;", "'")
    assert f"job {steady}: launch" not in spend.text
    store.dispose()
