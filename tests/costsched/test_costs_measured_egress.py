"""A move is charged the egress of the checkpoint it copied, measured in the job's store
(every file of its newest version at the move), at the source cloud's $/GB: in status (and
the dashboard, which shows status's costs), the report and the budgets alike, even when
the job file declares no size. Only when nothing is measured is the declared size charged,
and the figures say which (`gb_source`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched import own_budget
from costsched.optimize.decision import Place, egress_usd_per_gb
from costsched.report import build as build_report
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.checkpoints.local import LocalStore
from tests.costsched.service.test_status_scale import Instances

NOW = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
AWS = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
GCP = ("gcp", "us-east4", "us-east4-a", "a2-highgpu-1g", "spot", "linux")
SIZES = {"weights.bin": 3_000_000, "state.npz": 1_000_000}  # 0.004 GB in all


def job(store: PriceStore, tmp_path: Path, name: str, published: bool, declared: float | None
        ) -> int:
    """A job launched on aws 4 h ago and moved to gcp 2 h ago; its store holds a two-file
    checkpoint when `published`; `declared`: its checkpoint.size_gb."""
    location = tmp_path / name
    if published:
        for file, size in SIZES.items():
            (tmp_path / file).write_bytes(b"x" * size)
        LocalStore(location).publish_files({f: tmp_path / f for f in SIZES})
    checkpoint = {"location": str(location)}
    if declared is not None:
        checkpoint["size_gb"] = declared
    spec = {"name": name, "run": "python train.py", "steps": 100,
            "throughputs": {"V100": 1.0}, "checkpoint": checkpoint}
    start = NOW - timedelta(hours=4)
    job_id = store.jobs.create(name, {"spec": spec, "source": "test", "launcher": "fake"},
                               100, checkpoint_location=str(location), at=start)
    store.jobs.transition(job_id, "running", at=start)
    store.jobs.place(job_id, AWS, gpu_model="V100", gpu_count=1, at=start, usd_per_hour=1.0,
                     reason="launch", instance=f"a-{job_id}")
    store.jobs.place(job_id, GCP, gpu_model="A100", gpu_count=1, at=NOW - timedelta(hours=2),
                     usd_per_hour=1.0, reason="migration", instance=f"g-{job_id}")
    return job_id


@pytest.fixture()
def store(tmp_path: Path):  # noqa: ANN201
    found = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    yield found
    found.dispose()


def test_a_move_is_charged_the_measured_checkpoint_not_the_declared_size(
        store: PriceStore, tmp_path: Path) -> None:
    measured = job(store, tmp_path, "measured", published=True, declared=None)
    declared = job(store, tmp_path, "declared", published=False, declared=2.0)
    per_gb = egress_usd_per_gb(Place("aws", "us-east-1"), Place("gcp", "us-east4"))
    gb = sum(SIZES.values()) / 1e9
    assert per_gb > 0

    shown = {s.record.id: s for s in service.status(store, Instances(), at=NOW,
                                                    reconcile_first=False)}
    assert shown[measured].cost.egress_usd == pytest.approx(gb * per_gb)
    [move] = shown[measured].cost.moved
    assert (move.gb, move.gb_source) == (pytest.approx(gb), "measured")
    assert shown[declared].cost.egress_usd == pytest.approx(2.0 * per_gb)
    assert shown[declared].cost.moved[0].gb_source == "declared"

    rows = {r["job_id"]: r for r in build_report(store, until=NOW).egress.to_dict("records")}
    assert rows[measured]["gb"] == pytest.approx(gb)
    assert rows[measured]["usd_per_gb"] == pytest.approx(per_gb)
    assert rows[measured]["usd"] == pytest.approx(gb * per_gb)
    assert rows[measured]["gb_source"] == "measured"
    assert (rows[declared]["gb"], rows[declared]["gb_source"]) == (2.0, "declared")

    placed = store.jobs.placement_rows([measured])
    spent = own_budget.spent(store, placed, None, NOW, {measured: 0.0}, {measured: 1})
    compute = shown[measured].cost.compute_usd
    assert spent[measured] == pytest.approx(compute + gb * per_gb)
