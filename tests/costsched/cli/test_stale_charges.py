"""Charges computed from old prices say so where they are read: `status` and `report`
(text and --json) note how old the prices are (by `plan`'s rule and threshold,
`prices.stale_after`), that the figures are estimates, and what gives the real figures;
the commands the note names run."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.cli.test_status_amounts import ran, status_text
from tests.costsched.test_costs import EAST_A, at, observe


def _store(db: str, price_age_hours: float) -> None:
    store = PriceStore(db)
    observe(store, EAST_A, [(1 - price_age_hours, 0.0796)])  # hours before the job's start
    ran(store, Path(db).parent, "moons", [(EAST_A, 0.0796, "launch", 600)])
    store.dispose()


def test_status_notes_charges_from_months_old_prices(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    _store(db, 24 * 120)
    out = status_text(PriceStore(db), db)
    [note] = [line for line in out.splitlines() if line.startswith("note: the costs above")]
    assert "are estimates" in note and "4 mo old" in note, note
    assert "older than 7 days" in note  # plan's threshold and words
    assert "`costsched collect --cloud aws`" in note and "`costsched report --billed`" in note


def test_no_note_for_fresh_prices(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    _store(db, 2)
    assert "are estimates" not in status_text(PriceStore(db), db)
    out = CliRunner().invoke(app, ["report", "--db", db, "--until", at(3).isoformat(),
                                   "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["stale_prices"] is None


def test_report_notes_them_in_its_text_and_json(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    _store(db, 24 * 120)
    runner = CliRunner()
    text = runner.invoke(app, ["report", "--db", db, "--until", at(3).isoformat()],
                         env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    [note] = [line for line in text.output.splitlines() if line.startswith("note: ")]
    assert "the spend and savings" in note and "4 mo old" in note, note
    document = json.loads(runner.invoke(app, ["report", "--db", db, "--until",
                                              at(3).isoformat(), "--json"]).stdout)
    old = document["stale_prices"]
    assert old["count"] == old["total"] == 1 and old["oldest_age_hours"] > 24 * 119, old
    assert old["stale_after_hours"] == 7 * 24 and old["note"] == note.removeprefix("note: ")


def test_the_commands_the_note_names_run(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    _store(db, 24 * 120)
    runner = CliRunner()
    billed = runner.invoke(app, ["report", "--db", db, "--billed"])
    assert billed.exit_code == 0, billed.output  # no bills imported: says so, exit 0
    assert runner.invoke(app, ["collect", "--help"]).exit_code == 0
