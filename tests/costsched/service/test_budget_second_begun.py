"""The cap check counts the second under way whole: spend is kept in whole seconds, so a
check a moment before a second's end (100.99 s in) counted 100 s, and with the next
interval's charge came to just under the cap; the second it left out then passed the cap
before the next check. In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from costsched.config import BudgetsConfig
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.caps import raise_budget
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

RAN, WATCH = 100, 30.0  # seconds run at the check (and 0.99 s more), its interval


def test_a_check_late_in_a_second_counts_that_second(store: PriceStore,
                                                      tmp_path: Path) -> None:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "edge", "throughputs": {"V100": 0.5}, "steps": 2000, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [placed] = store.jobs.placement_rows([job.id])
    per_second = placed.usd_per_hour / 3600
    # Between what 100 s and what 101 s, each with the interval ahead, come to.
    raise_budget(store, job.id, per_second * (RAN + WATCH + 0.5), at=placed.start_at)
    at = placed.start_at + timedelta(seconds=RAN + 0.99)
    caps.enforce(store, launcher, BudgetsConfig(), at, WATCH)
    assert store.jobs.get(job.id).state == "stopped"  # was: running, left to pass its cap
