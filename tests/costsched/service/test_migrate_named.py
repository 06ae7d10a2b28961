"""`migrate JOB` of a job that is not running says why in one line (its state), as `stop`
and `start` do, not "No running job to consider"."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_status_due import launched


@pytest.mark.parametrize("to", [None, "aws us-east-1a p3.2xlarge spot"])
def test_a_named_job_that_is_not_running_is_refused_with_its_state(
        store: PriceStore, tmp_path: Path, to: str | None) -> None:
    shown = launched(store, tmp_path, None)
    job = shown.record.id
    now = datetime.now(timezone.utc)
    store.jobs.end_placement(job, now)
    store.jobs.transition(job, "succeeded", at=now)
    with pytest.raises(InvalidInput) as info:
        service.migrate(store, FakeLauncher(), job, dry_run=True, to=to)
    assert str(info.value) == f"job {job} (due) has succeeded: only a running job is moved"
    assert service.migrate(store, FakeLauncher(), None, dry_run=True) == []  # none running
