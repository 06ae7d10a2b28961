"""The report's "Egress per move" table names the move each row is the copy of (its id and
kind, as the moves table names them): a migration and a recovery between the same regions
at the same time read apart, in the text, `report --json`, the HTML file and the
dashboard's Spend page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, EAST_B, advance, at, job, observe, place


def _twice(db: str) -> tuple[int, int]:
    """A job migrated from us-east-1a to us-east-1b at hour 1, then recovered back at hour
    2 (the same regions, 2 GB each time): two copies alike but for their moves."""
    store = PriceStore(db)
    observe(store, EAST, [(-10, 1.0)])
    observe(store, EAST_B, [(-10, 1.2)])
    moved = job(store, "twice", {"V100": 1.0}, gb=2)
    place(store, moved, EAST, 0, "launch", "t-1")
    migration = store.moves.create(moved, "migration", [], at=at(1), source_instance="t-1")
    migration = advance(store, migration, "t-2", [("checkpoint_verified", 1)])
    place(store, moved, EAST_B, 1, "migration", "t-2")
    advance(store, migration, "t-2", [("target_launched", 1), ("target_running", 1),
                                      ("source_terminated", 1), ("done", 1)])
    store.jobs.end_placement(moved, at(2))
    recovery = store.moves.create(moved, "recovery", [], at=at(2), source_instance="t-2")
    recovery = advance(store, recovery, "t-3", [("checkpoint_verified", 2)])
    place(store, moved, EAST, 2, "recovery", "t-3")
    advance(store, recovery, "t-3", [("target_launched", 2), ("target_running", 2),
                                     ("source_terminated", 2), ("done", 2)])
    store.jobs.end_placement(moved, at(3))
    store.dispose()
    return migration.id, recovery.id


def _report(*argv: str) -> str:
    result = CliRunner().invoke(app, ["report", *argv], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_each_egress_row_names_its_move(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    migration, recovery = _twice(db)
    egress = json.loads(_report("--db", db, "--json"))["egress"]
    assert [(r["move_id"], r["kind"]) for r in egress] == [(migration, "migration"),
                                                          (recovery, "recovery")], egress
    text = _report("--db", db)
    table = text[text.index("Egress per move"):].split("\n\n")[0]
    heads = next(line for line in table.splitlines() if "move" in line and "kind" in line)
    assert heads.index("move") < heads.index("kind") < heads.index("at"), heads
    rows = [line for line in table.splitlines() if "│ twice" in line]
    assert len(rows) == 2 and rows[0] != rows[1], table
    assert f"│ {migration} " in rows[0] and "migration" in rows[0], rows
    assert f"│ {recovery} " in rows[1] and "recovery" in rows[1], rows
    html = tmp_path / "report.html"
    _report("--db", db, "--html", str(html))
    page = html.read_text()
    part = page[page.index("Egress per move"):]
    assert "<th>move</th>" in part.replace(" ", "") or ">move<" in part, part[:2000]
    assert ">migration<" in part and ">recovery<" in part


def test_the_dashboards_spend_page_names_the_moves_too(tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="the dashboard extra is not installed")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    db = str(tmp_path / "store.sqlite")
    _twice(db)
    store = PriceStore(db)
    try:
        page = TestClient(create_app(store)).get("/spend").text
    finally:
        store.dispose()
    part = page[page.index("Egress per move"):]
    assert ">migration<" in part and ">recovery<" in part, part[:3000]
