"""A saving that cannot be figured (no price for a baseline) is said as not known, on the
Spend page's cards and in the report's totals line the job pages repeat: 'against
on-demand: not known', never '- saved against on-demand' nor 'saved - against ...'."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from costsched.dashboard.app import create_app
from costsched.report.cells import totals_line
from costsched.store import PriceStore
from tests.costsched.report.scenario import at
from tests.costsched.report.test_baselines import odd_db  # noqa: F401


def test_the_totals_line_says_a_baseline_not_known() -> None:
    totals = {"usd": 0.00327, "compute_usd": 0.00327, "egress_usd": 0.0,
              "billed_hours": 0.01806, "instance_hours": 0.01806,
              "saved_vs_on_demand_usd": 0.00623, "saved_vs_launch_choice_usd": None}
    line = totals_line(totals)
    assert line.endswith("; saved $0.0062 against on-demand; against the launch-time "
                         "choice kept: not known"), line


def test_the_spend_cards_say_a_baseline_not_known(odd_db: Path) -> None:  # noqa: F811
    store = PriceStore(str(odd_db))  # a job on an offering with no on-demand price
    page = TestClient(create_app(store)).get("/spend", params={"until": at(5).isoformat()})
    assert page.status_code == 200
    cards = " ".join(page.text.split()).split('<section class="cards">')[1].split(
        "</section>")[0]
    store.dispose()
    assert "- saved" not in cards.replace('<span class="figure">', "").replace(
        "</span><span>", " "), cards
    assert "<span>against on-demand: not known</span>" in cards, cards
