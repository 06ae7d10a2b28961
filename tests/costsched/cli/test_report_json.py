"""`report --json` carries every table the text shows (each under one name, with the same
rows), the totals its first line states, and the flags it prints; the dashboard's Spend
page shows the same tables. A table added to the text without its JSON counterpart fails
here."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

import pandas as pd
from starlette.testclient import TestClient

from costsched.cli import common
from costsched.dashboard.app import create_app
from costsched.report.tables import TABLES
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report.test_estimates import EAST, at, finish, planned_job

# Tables the report prints from elsewhere, and their key in its JSON.
ALSO = {"Budgets now": "budgets_now"}


def store_with_every_table(db_path: Path) -> PriceStore:
    """Jobs planned at launch (estimates, calibration), with steps (speeds), one over its
    budget (budgets), one preempted and recovered on another zone (moves, egress)."""
    store = PriceStore(str(db_path))
    store.ingest(pd.DataFrame([(*EAST, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-1)), "test")],
                              columns=OBSERVATION_COLUMNS))
    finish(store, planned_job(store, "quick"), 8)
    slow = planned_job(store, "slow")
    store.jobs.end_placement(slow, at(3))
    store.moves.create(slow, "recovery", [], at=at(3), source_instance="slow-1",
                       detail="instance slow-1 preempted")
    west = ("aws", "us-west-2", "us-west-2b", "p3.2xlarge", "spot", "linux")
    store.ingest(pd.DataFrame([(*west, "V100", 1, 8, 61.0, 0.5, pd.Timestamp(at(-1)), "test")],
                              columns=OBSERVATION_COLUMNS))
    store.jobs.place(slow, west, gpu_model="V100", gpu_count=1, at=at(3), usd_per_hour=0.5,
                     reason="recovery", instance="slow-2")
    store.jobs.record_step(slow, 18_000, at=at(7))
    spec = {"name": "capped", "throughputs": {"V100": 1.0}, "steps": 36_000,
            "constraints": {"budget": 1.0}}
    capped = store.jobs.create("capped", {"spec": spec, "source": "test"}, 36_000, at=at(0))
    store.jobs.place(capped, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance="capped-1")
    store.jobs.record_step(capped, 3600, at=at(2))
    return store


def titled_tables(text: str) -> dict[str, int]:
    """{title: rows} of each table in a report's text (its title is the line above its top
    border; its rows are the lines between the header's rule and the bottom border)."""
    lines = text.splitlines()
    out = {}
    for i, line in enumerate(lines):
        if line.startswith("┏") and i > 0:
            title = " ".join(lines[i - 1].split())
            body = lines[i:]
            start = next(n for n, b in enumerate(body) if b.startswith("┡"))
            end = next(n for n, b in enumerate(body) if b.startswith("└"))
            out[title] = sum(1 for b in body[start + 1:end] if not b.startswith("├"))
    return out


def test_every_text_table_is_in_the_json(db_path: Path, cli, monkeypatch) -> None:  # noqa: ANN001
    store_with_every_table(db_path).dispose()
    monkeypatch.setattr(common.console, "width", 400)  # one line a row: rows are counted
    until = at(11).isoformat()
    text = cli("report", "--until", until)
    assert text.exit_code == 0, text.output
    document = json.loads(cli("report", "--until", until, "--json").stdout)
    shown = titled_tables(text.output)
    keys = {t.title: t.name for t in TABLES} | ALSO
    assert set(shown) <= set(keys), f"text tables without JSON: {set(shown) - set(keys)}"
    # Every table of this report is shown, and has its rows in the JSON too.
    assert set(shown) == set(keys), set(keys) - set(shown)
    for title, rows in shown.items():
        assert len(document[keys[title]]) == rows, title
    # The first line's totals and the flags under it.
    for key in ("usd", "compute_usd", "egress_usd", "billed_hours", "saved_vs_on_demand_usd",
                "saved_vs_launch_choice_usd"):
        assert key in document["totals"]
    flags = [line.removeprefix("throughput: ") for line in text.output.splitlines()
             if line.startswith("throughput: ")]
    assert flags and set(flags) <= {s["flag"] for s in document["speeds"]}
    assert re.search(r"^Spend \$[\d.]+ \(compute", text.output, re.M)


def test_the_spend_page_shows_every_table(db_path: Path) -> None:
    store = store_with_every_table(db_path)
    page = TestClient(create_app(store)).get("/spend", params={"until": at(11).isoformat()})
    assert page.status_code == 200
    for t in TABLES:
        assert f"<h2>{escape(t.title, quote=False).replace(chr(39), '&#39;')}</h2>" in page.text
    store.dispose()


def test_billed_hours_and_training_hours_are_never_one_word(db_path: Path, cli,  # noqa: ANN001
                                                             monkeypatch) -> None:
    """The spend tables' placement hours and the estimates' training hours are two things:
    each has its own name in the text, the JSON, the HTML file and the dashboard, and no
    column is a bare `hours` a reader could take for either."""
    store = store_with_every_table(db_path)
    monkeypatch.setattr(common.console, "width", 400)
    until = at(11).isoformat()
    text = cli("report", "--until", until, "--html", db_path.parent / "r.html").output
    document = json.loads(cli("report", "--until", until, "--json").stdout)
    for key in ("jobs", "clouds", "days"):
        assert "billed_hours" in document[key][0] and "hours" not in document[key][0], key
    assert "billed_hours" in document["totals"] and "hours" not in document["totals"]
    estimate = document["estimates"][0]
    assert {"training_hours", "expected_training_hours", "training_hours_ratio"} <= set(
        estimate) and "hours" not in estimate and "expected_hours" not in estimate
    assert {"median_training_hours_ratio", "worst_training_hours_ratio"} <= set(
        document["calibration"][0])
    page = TestClient(create_app(store)).get("/spend", params={"until": until}).text
    html = (db_path.parent / "r.html").read_text()
    for shown in (text, page, html):
        headings = re.findall(r"<th[^>]*>([^<]*)</th>", shown) if "<th" in shown else [
            h.strip() for line in shown.splitlines() if line.startswith("┃")
            for h in line.strip("┃").split("┃")]
        assert "billed hours" in headings and "training hours" in headings, headings
        assert "expected training hours" in headings and "hours" not in headings, headings
    store.dispose()
