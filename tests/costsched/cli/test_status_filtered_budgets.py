"""Every table `status` prints follows its filters: the budgets shown are those of the
jobs shown (--state, --name, --limit, a job named), in the text and in --json alike; with
no filter, every budget."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.service.jobs.caps import raise_budget
from tests.costsched.service.test_status_without_pandas import _store


@pytest.fixture()
def url(tmp_path: Path) -> str:
    """`done` (job 1, succeeded) and `live` (job 2, running), each with a budget of its
    own."""
    now = datetime.now(timezone.utc) - timedelta(seconds=1)
    url, store = _store(tmp_path, now)
    raise_budget(store, 1, 40.0, at=now)
    raise_budget(store, 2, 50.0, at=now)
    store.dispose()
    return url


@pytest.mark.parametrize(("given", "shown"), [
    ((), {"done", "live"}),
    (("--state", "succeeded"), {"done"}),
    (("--state", "running"), {"live"}),
    (("--name", "liv*"), {"live"}),
    (("--limit", "1"), {"live"}),
    (("done",), {"done"}),
    (("--state", "stopped"), set()),
])
def test_the_budgets_shown_are_those_of_the_jobs_shown(
        cli, url: str, given: tuple[str, ...], shown: set[str]) -> None:  # noqa: ANN001
    budgets = {f"job {1 if n == 'done' else 2} ({n})" for n in shown}
    document = cli("status", "--db", url, "--no-reconcile", "--json", *given)
    assert document.exit_code == 0, document.output
    doc = json.loads(document.stdout)
    assert {j["name"] for j in doc["jobs"]} == shown
    assert {b["name"] for b in doc["budgets"]} == budgets
    text = cli("status", "--db", url, "--no-reconcile", *given)
    assert text.exit_code == 0, text.output
    for name in ("done", "live"):
        assert (f"({name})" in text.stdout) == (name in shown), text.stdout


@pytest.mark.parametrize(("query", "shown"), [
    ("", {"done", "live"}),
    ("?state=succeeded", {"done"}),
    ("?name=liv*", {"live"}),
])
def test_the_dashboards_jobs_document_filters_its_budgets_alike(
        url: str, query: str, shown: set[str]) -> None:
    """`/api/jobs` is `status --no-reconcile --json`: its budgets follow its filters too."""
    pytest.importorskip("starlette", reason="the dashboard extra is not installed")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app
    from costsched.store import PriceStore

    store = PriceStore(url)
    try:
        doc = TestClient(create_app(store)).get(f"/api/jobs{query}").json()
    finally:
        store.dispose()
    assert {j["name"] for j in doc["jobs"]} == shown
    assert {b["name"] for b in doc["budgets"]} == {
        f"job {1 if n == 'done' else 2} ({n})" for n in shown}
