"""An `ordered:` alternative passed over because no speed of the job is known on its GPU (a
GPU costsched has no data sheet of, that a catalog refresh found): the plan says so in the
task's words, the key that cannot give it, and what runs it, never the ranking's own
reason ('no throughput')."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched import catalog, service
from costsched.model import InvalidInput
from costsched.store import PriceStore

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
TASK = """\
name: ord
resources:
  ordered:
    - {cloud: aws, instance_type: g9.xlarge}
    - {cloud: aws, instance_type: p3.2xlarge}
  use_spot: true
run: python train.py
costsched:
  throughputs: {THROUGHPUTS}
  steps: 20000
"""


@pytest.fixture()
def found_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A store pricing a V100 and an RTX6000 (a type a refresh found) spot: its path."""
    found = tmp_path / "discovered.csv"
    found.write_text("cloud,instance_type,gpu_model,gpu_count,gpu_memory_gb,vcpus,memory_gb,"
                     "regions,zones,source\naws,g9.xlarge,RTX6000,1,96,8,64,us-east-1,"
                     "us-east-1a,test\n")
    monkeypatch.setenv("COSTSCHED_DISCOVERED_TYPES", str(found))
    catalog.reload()
    db = tmp_path / "s.sqlite"
    store = PriceStore(str(db))
    store.ingest(pd.DataFrame([
        dict(cloud="aws", region="us-east-1", zone="us-east-1a", instance_type=t,
             market="spot", os="linux", gpu_model=g, gpu_count=1, vcpus=8, memory_gb=61.0,
             usd_per_hour=p, effective_at=NOW - timedelta(hours=1), source="test")
        for t, g, p in (("p3.2xlarge", "V100", 1.0), ("g9.xlarge", "RTX6000", 0.5))]))
    store.dispose()
    yield db
    monkeypatch.delenv("COSTSCHED_DISCOVERED_TYPES")
    catalog.reload()


def test_an_alternative_with_no_speed_known_says_what_is_missing_in_the_tasks_words(
        tmp_path: Path, found_type: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(TASK.replace("{THROUGHPUTS}", "{V100: 2.0}"))
    [plan] = service.plan(str(found_type), str(path), at=NOW).jobs
    [over] = plan.passed_over
    assert (over.alternative, over.asked, over.taken) == (1, "RTX6000:1 spot in aws", 2)
    assert over.cause == (
        "its 1 offering left out: 1 no speed known on its GPU (RTX6000: no published figure, "
        "no data sheet to estimate one from, and `costsched.throughputs` takes no figure for "
        "it; `sky launch` runs it)")
    # What it says of the key holds: a figure for that GPU is refused.
    path.write_text(TASK.replace("{THROUGHPUTS}", "{V100: 2.0, RTX6000: 3.0}"))
    with pytest.raises(InvalidInput, match="costsched.throughputs: unknown GPU model "
                                           "'RTX6000'"):
        service.plan(str(found_type), str(path), at=NOW)
