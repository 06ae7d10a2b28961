"""Spend and savings charged from old prices carry the same note in every view of the
report: its text and --json (`Report.stale_note`), its HTML file and the dashboard's
Spend page."""

from __future__ import annotations

from html import unescape
from pathlib import Path

import pytest

from costsched.report import build
from costsched.report.html import render
from costsched.store import PriceStore
from tests.costsched.cli.test_stale_charges import _store
from tests.costsched.test_costs import at


def test_the_html_and_the_spend_page_say_the_note(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    _store(db, 24 * 120)
    store = PriceStore(db)
    built = build(store, until=at(3), now=at(3))
    note = built.stale_note()
    assert note.startswith("note: the spend and savings") and "4 mo old" in note, note
    assert note in unescape(render(built))  # was: no note

    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    page = TestClient(create_app(store)).get("/spend", params={"until": at(3).isoformat()}).text
    assert note in unescape(page)  # was: no note
    store.dispose()


def test_no_note_for_fresh_prices(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    _store(db, 2)
    store = PriceStore(db)
    built = build(store, until=at(3), now=at(3))
    assert built.stale is None and "are estimates" not in render(built)
    store.dispose()
