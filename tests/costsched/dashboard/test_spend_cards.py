"""The Spend page's cards say a saving below zero as what it is: '$2.0500 more than the
launch-time choice kept', as the report's totals line does, never '-$2.0500 saved'."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from costsched.dashboard.app import create_app
from costsched.store import PriceStore
from tests.costsched.report.report_stores import STORES


def test_a_negative_saving_is_said_as_what_it_cost_more(tmp_path: Path) -> None:
    store = PriceStore(str(tmp_path / "store.sqlite"))
    until = STORES["moves_and_budgets"](store)  # its jobs cost $2.05 more than kept
    page = TestClient(create_app(store)).get("/spend", params={"until": until.isoformat()})
    assert page.status_code == 200
    text = " ".join(page.text.split())
    assert ('<span class="figure">$2.0500</span><span>more than the launch-time choice '
            "kept</span>") in text, text
    assert '<span class="figure">$23.1234</span><span>saved against on-demand</span>' in text
    assert "-$2.05" not in text.split("<section class=\"cards\">")[1].split("</section>")[0]
    store.dispose()
