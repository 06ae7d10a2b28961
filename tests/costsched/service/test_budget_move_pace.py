"""A job whose cap was to move it (`at_cap: move`), stopped because no offering finishes it
within what is left: the stop's 'to finish there' on the cheapest offering and the hint
that gives it enough, on that same offering, price its rest as one figure. Still being
measured and slower than its plan, both price it at the pace it ran so far, never the
stop at its plan's speed beside the hint at its pace (in-memory launcher, SQLite store)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.config import BudgetsConfig, effective
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher

PACE = 29.0  # its real speed on the T4; its plan says 60 steps/s on a T4 or an L4
THERE = "gcp us-east5 g2-standard-4 spot"
MOVED = re.compile(r"not moved: no offering finishes it within the \$[0-9.]+ left \(the "
                   rf"cheapest: {THERE}, \$([0-9.]+) to finish there including the move "
                   r"of \$([0-9.]+) ")
HINT = re.compile(r"\+ \$([0-9.]+) expected for its ([0-9,]+) steps left at 29 steps/s on "
                  rf"{THERE} \(estimated: the 29 steps/s it ran so far, not yet measured")


def _offer(cloud: str, region: str, zone: str, instance: str, gpu: str, usd: float,
           at: datetime) -> dict:
    return dict(cloud=cloud, region=region, zone=zone, instance_type=instance,
                market="spot", os="linux", gpu_model=gpu, gpu_count=1, vcpus=4,
                memory_gb=16.0, usd_per_hour=usd, effective_at=at, source="test")


def test_the_stop_and_its_hint_price_finishing_there_alike(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "instant.toml"  # no boot to price: the rest's cents decide
    config.write_text("[migration]\nrestart_minutes = 0\nwarmup_minutes = 0\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    hour_ago = datetime.now(timezone.utc) - timedelta(hours=1)
    store.ingest(pd.DataFrame([
        _offer("aws", "us-east-1", "us-east-1a", "g4dn.xlarge", "T4", 0.2, hour_ago),
        _offer("gcp", "us-east5", "", "g2-standard-4", "L4", 0.5, hour_ago)]))
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump({
        "name": "slow", "throughputs": {"T4": 60, "L4": 60}, "steps": 2480, "run": "true",
        "constraints": {"budget": 0.0034, "at_cap": "move", "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 2, "size_gb": 0.001}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, [path], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    began = store.jobs.placement_rows([job.id])[0].start_at
    # Two readings 6 s apart (under the 10 s a speed is judged after): still measured.
    for second in (32, 38):
        store.jobs.record_step(job.id, PACE * (second - 1), at=began + timedelta(seconds=second))
    store.ingest(pd.DataFrame([_offer("gcp", "us-east5", "", "g2-standard-4", "L4", 0.07962,
                                      began)]))  # cheaper by the hour than the T4 now
    at = began + timedelta(seconds=40)
    caps.enforce(store, launcher, BudgetsConfig(), at, 30.0,
                 effective().migration.overheads())
    assert store.jobs.get(job.id).state == "stopped"
    stop = store.jobs.last_details([job.id], "state")[job.id]
    moved = MOVED.search(stop)
    assert moved, stop
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, job.id, budget=0.0001, at=at + timedelta(seconds=1))
    hint = HINT.search(str(refused.value))
    assert hint, refused.value
    there, move, rest = float(moved[1]), float(moved[2]), float(hint[1])
    places = len(moved[1].partition(".")[2])
    # One figure, as each line writes it: the move's total less its move is the hint's rest
    # (each rounded at its line's decimals: within a unit of the last).
    assert abs((there - move) - rest) <= 1.5 * 10 ** -places, (stop, refused.value)
