"""N `costsched launch` of one name started together, on SQLite and PostgreSQL, start one
job; the others are refused in one line. Real processes, a real store, real local
instances."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import set_prices, wait_for
from tests.real_jobs import SETTLE
from tests.reliability.conftest import BACKENDS, together
from tests.reliability.test_moves_race import (  # noqa: F401 - instances: the fixture
    PROCESSES,
    instances,
    spec_in,
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_launches_of_one_name_started_together_start_one_job(backend: str, fresh_url,
                                                             tmp_path: Path,
                                                             instances: LocalLauncher) -> None:  # noqa: F811
    url = fresh_url(backend)
    store = PriceStore(url)
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = spec_in(tmp_path, "twin", "sleep 60")
    done = together(tmp_path, [["launch", str(spec), "--wait", "10", "--db", url]]
                    * PROCESSES)
    jobs = store.jobs.find("twin")
    live = [j for j in jobs if not j.final]
    print(f"\n{backend}: {PROCESSES} launch processes, {len(jobs)} job(s) stored, "
          f"{len(live)} live; exit codes {[d.returncode for d in done]}")
    assert len(jobs) == 1 and len(live) == 1
    assert sum(d.returncode == 0 for d in done) == 1
    refused = [d for d in done if d.returncode != 0]
    assert all("job name 'twin'" in d.stderr + d.stdout for d in refused)
    assert len(instances.instances(live[0].id)) == 1
    wait_for(lambda: store.jobs.get(live[0].id).state == "running", seconds=SETTLE)
    store.dispose()
