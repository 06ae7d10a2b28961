"""The dashboard writes a finished job's cost at the store's decimals, as `status` and
`report` do, on its jobs page and on the job's own page alike."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.testclient import TestClient

from costsched.dashboard.app import create_app
from costsched.store import PriceStore
from tests.costsched.cli.test_status_store_decimals import _run, small_and_big


def test_a_jobs_cost_reads_on_every_page_as_status_writes_it(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    _, big = small_and_big(db)
    found = re.search(rf"│\s*{big}\s*│\s*big\s*│.*?(\$[\d.,]+)",
                      _run("status", "--db", db, "--no-reconcile", str(big)))
    assert found is not None
    client = TestClient(create_app(PriceStore(db)))
    for page in ("/", f"/jobs/{big}"):
        text = client.get(page).text
        assert set(re.findall(r"\$0\.8202\d*", text)) == {found.group(1)}, page
