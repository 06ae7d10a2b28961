"""Where the prices a job's cost is charged at are older than `prices.stale_after`, the
dashboard's job list and job page say so under the money, in the words `status` notes
it with (estimates, the oldest price's age, what brings newer ones), and `status --json`
carries the same note."""

from __future__ import annotations

import json

from starlette.testclient import TestClient

from costsched.store import PriceStore
from tests.costsched.dashboard.test_short_exit_listed import ended_job
from tests.costsched.report.scenario import at
from tests.costsched.service.test_jobs import set_prices


def test_the_jobs_pages_note_costs_charged_at_old_prices(store: PriceStore,
                                                        client: TestClient, cli) -> None:  # noqa: ANN001
    set_prices(store, {"us-east-1a": 1.0}, at(-24 * 30))  # 30 days before the job ran
    job = ended_job(store, "old", "succeeded")
    note = client.get("/api/jobs").json()["costs_note"]
    assert note.startswith("note: the costs above are estimates from stored and list prices, "
                           "not the clouds' bills: the price is older than 7 days"), note
    said = cli("status", "--no-reconcile")
    assert note in " ".join(said.output.split())  # the words status prints
    assert json.loads(cli("status", "--no-reconcile", "--json").stdout)["costs_note"] == note
    for page in ("/", f"/jobs/{job}"):
        assert note in " ".join(client.get(page).text.split()).replace("&#39;", "'"), page
