"""A report keeps every section to its period: the speeds and estimates of the jobs that
ran in it alone, and its heading says when nothing was placed in it (not 'the first
placement to' a time before any)."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.report import build
from costsched.report.html import render
from costsched.store import PriceStore
from tests.costsched.report.scenario import NOW, at, fill


@pytest.fixture()
def filled(any_store: PriceStore) -> tuple[PriceStore, dict[str, int]]:
    return any_store, fill(any_store)


@pytest.fixture()
def filled_db(db_path: Path) -> Path:
    store = PriceStore(str(db_path))
    fill(store)
    store.dispose()
    return db_path


def test_speeds_and_estimates_are_of_the_jobs_in_the_period(filled) -> None:  # noqa: ANN001
    store, ids = filled
    whole = build(store, now=at(NOW))
    assert {r["job_id"] for r in whole.rows["speeds"]} == set(ids.values())
    # gamma starts at hour 5: a period that ends at hour 2 does not hold it
    early = build(store, until=at(2), now=at(NOW))
    assert {r["job_id"] for r in early.rows["speeds"]} == {ids["alpha"], ids["beta"]}
    assert {r["job_id"] for r in early.rows["jobs"]} == {ids["alpha"], ids["beta"]}
    # one from hour 4.75 holds alpha's and beta's open placements and gamma's
    late = build(store, since=at(4.75), now=at(NOW))
    assert {r["job_id"] for r in late.rows["speeds"]} == set(ids.values())
    before = build(store, until=at(-2), now=at(NOW))
    assert not before.placed and before.rows["speeds"] == [] and before.flags() == []
    assert before.rows["estimates"] == [] and before.rows["calibration"] == []
    assert whole.placed and early.placed


def test_a_period_before_any_placement_says_nothing_was_placed(filled) -> None:  # noqa: ANN001
    store, _ = filled
    before = build(store, until=at(-2), now=at(NOW))
    assert "<p>up to 2024-06-01 18:00 UTC: nothing was placed in that period</p>" in (
        render(before))
    since = build(store, since=at(-5), until=at(-2), now=at(NOW))
    assert "<p>2024-06-01 15:00 UTC to 2024-06-01 18:00 UTC: nothing was placed in that " \
           "period</p>" in render(since)
    assert "<p>the first placement to 2024-06-02 02:00 UTC</p>" in render(
        build(store, now=at(NOW)))


def test_the_text_report_says_the_same(cli, filled_db: Path) -> None:  # noqa: ANN001
    before = cli("report", "--until", "2024-06-01T18:00Z")
    assert before.exit_code == 0, before.output
    lines = before.stdout.splitlines()
    assert lines[0] == "Cost report: up to 2024-06-01 18:00 UTC: nothing was placed in that " \
                       "period"
    assert "throughput:" not in before.stdout and "Measured speed" not in before.stdout
    assert cli("report", "--until", "2024-06-02T02:00Z").stdout.startswith(
        "Cost report: the first placement to 2024-06-02 02:00 UTC\n")


def test_json_says_whether_anything_was_placed(cli, filled_db: Path) -> None:  # noqa: ANN001
    import json

    before = json.loads(cli("report", "--until", "2024-06-01T18:00Z", "--json").stdout)
    whole = json.loads(cli("report", "--until", "2024-06-02T02:00Z", "--json").stdout)
    assert before["placed"] is False and whole["placed"] is True


def test_the_billed_report_heads_its_period_alike(cli, filled_db: Path) -> None:  # noqa: ANN001
    import json

    before = cli("report", "--billed", "--until", "2024-06-01T18:00Z")
    assert before.exit_code == 0, before.output
    assert before.stdout.splitlines()[0] == (
        "Billed against estimated: up to 2024-06-01 18:00 UTC: nothing was placed in that "
        "period")
    whole = cli("report", "--billed", "--until", "2024-06-02T02:00Z")
    assert whole.stdout.startswith(
        "Billed against estimated: the first placement to 2024-06-02 02:00 UTC\n")
    shown = json.loads(cli("report", "--billed", "--until", "2024-06-01T18:00Z",
                           "--json").stdout)
    assert shown["placed"] is False


def test_the_dashboards_spend_page_heads_its_period_alike(filled) -> None:  # noqa: ANN001
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    store, _ = filled
    client = TestClient(create_app(store))
    before = client.get("/spend", params={"until": "2024-06-01T18:00Z"}).text
    assert ('<p class="note">Up to 2024-06-01 18:00 UTC: nothing was placed in that '
            "period.</p>") in before
    assert "the first placement" not in before
    whole = client.get("/spend", params={"until": "2024-06-02T02:00Z"}).text
    assert '<p class="note">The first placement to 2024-06-02 02:00 UTC.</p>' in whole
