"""`costsched plan` for a job of a model whose earlier job ran far from its plan's
throughput says so, with both figures; the declared figure is still the one planned."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import yaml

from costsched.store import OBSERVATION_COLUMNS, PriceStore

T0 = datetime(2026, 1, 3, tzinfo=timezone.utc)
EAST = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")


def test_the_next_plan_of_the_model_hears_of_it(cli, db_path: Path, tmp_path: Path) -> None:
    spec = {"name": "slowpoke", "throughputs": {"V100": 10.0}, "steps": 36_000,
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}
    store = PriceStore(str(db_path))
    store.ingest(pd.DataFrame([(*EAST, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(T0), "test")],
                              columns=OBSERVATION_COLUMNS))
    path = tmp_path / "slowpoke.yaml"
    job = store.jobs.create("slowpoke", {"spec": spec, "source": str(path)}, 36_000, at=T0)
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=T0, usd_per_hour=1.0,
                     reason="launch", instance="i-1")
    store.jobs.record_step(job, 3600, at=T0 + timedelta(hours=1))  # 1 step/s
    store.jobs.end_placement(job, T0 + timedelta(hours=1))
    store.jobs.transition(job, "stopped", at=T0 + timedelta(hours=1))
    store.dispose()
    path.write_text(yaml.safe_dump(spec))

    result = cli("plan", str(path), "--at", (T0 + timedelta(hours=2)).isoformat())
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert ("throughput: job 1 (slowpoke): measured 1 steps/s on 1xV100, 10.00x "
            "slower than the 10 its plan used (the job spec's throughputs)") in text
    assert (f"; the figure its job file declares is kept: edit its `throughputs:` in {path} "
            "to use the measured one") in text and "savings use" not in text
    assert re.search(r"\$1\.0000 │\s+10 │", result.output)  # still planned at 10 steps/s
    # The hint's fix works, and `throughput set` would not: a declared figure wins.
    at = (T0 + timedelta(hours=2)).isoformat()
    assert cli("throughput", "set", "slowpoke", "V100", "1").exit_code == 0
    assert re.search(r"\$1\.0000 │\s+10 │", cli("plan", str(path), "--at", at).output)
    path.write_text(yaml.safe_dump({**spec, "throughputs": {"V100": 1.0}}))
    assert re.search(r"\$1\.0000 │\s+1 │", cli("plan", str(path), "--at", at).output)
