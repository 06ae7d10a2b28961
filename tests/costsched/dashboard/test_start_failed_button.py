"""A failed job's page offers to start it again, as `costsched start` takes it up (a
stopped one's does too); a succeeded one's does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.dashboard.auth import Access
from costsched.store import PriceStore
from tests.costsched.dashboard.conftest import app_client, at, running

TOKEN = "a-token-long-enough-to-be-a-token-0123456789"


@pytest.mark.parametrize(("state", "offered"), [("failed", True), ("stopped", True),
                                                ("succeeded", False)])
def test_a_failed_job_can_be_started_again_from_its_page(
        store: PriceStore, instances: Path, state: str, offered: bool) -> None:
    job = running(store, "train")
    store.jobs.end_placement(job, at(1))
    store.jobs.transition(job, state, at=at(1))
    page = app_client(store, Access(TOKEN, actions=True)).get(f"/jobs/{job}").text
    assert (f'action="/jobs/{job}/start"' in page) == offered
