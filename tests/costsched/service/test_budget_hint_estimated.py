"""The hint a start at a job's budget gives names the pace its rest is priced at where it
would start, and says when that pace is an estimate: the job measured on a V100, started
again on a cheaper A10G, is priced at its measured speed carried by its table's ratio, the
figure the start's own pricing used (`rest_pace`). In-memory launcher, SQLite store."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

HINT = re.compile(r"\$([0-9.]+) expected for its 1,566 steps left at ([0-9.]+) steps/s on "
                  r"aws us-east-1a g5\.xlarge spot \(estimated: ([0-9.]+) measured on V100 x "
                  r"the table's ratio\) \+ ")


def test_the_hint_names_where_its_rest_is_priced_and_that_its_pace_is_estimated(
        store: PriceStore, tmp_path: Path) -> None:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "fast.yaml"
    path.write_text(yaml.safe_dump({
        "name": "fast", "throughputs": {"V100": 200.0, "A10G": 100.0}, "steps": 2000,
        "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"], "budget": 1.0},
        "checkpoint": {"interval_minutes": 30, "size_gb": 0.001}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, [path], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    began = store.jobs.placement_rows([job.id])[0].start_at
    store.jobs.record_step(job.id, 100, at=began + timedelta(seconds=10))
    store.jobs.record_step(job.id, 434, at=began + timedelta(seconds=37))
    service.stop(store, launcher, job.id, at=began + timedelta(seconds=37))
    # A cheaper GPU, half the V100's speed by the table, at a fifth of its price.
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="g5.xlarge",
        market="spot", os="linux", gpu_model="A10G", gpu_count=1, vcpus=4, memory_gb=16.0,
        usd_per_hour=0.2, effective_at=began - timedelta(hours=1), source="test")]))
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, job.id, budget=0.003,
                      at=began + timedelta(seconds=38))
    said = str(refused.value)
    found = HINT.search(said)
    assert found, said
    rest, pace, measured = (float(found[i]) for i in range(1, 4))
    assert measured == pytest.approx(334 / 27, rel=0.02)
    assert pace == pytest.approx(measured / 2, rel=0.02)  # the table's A10G/V100
    # The figure is that pace's: 1,566 steps at it on $0.2/h.
    assert rest == pytest.approx(1566 / pace / 3600 * 0.2, rel=0.1)
