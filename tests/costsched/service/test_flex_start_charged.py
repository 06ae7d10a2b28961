"""A flex-start placement is charged from when its instance runs, not from its launch:
Compute Engine bills a flex-start VM from when it runs, not for its wait for capacity. On
the Compute Engine fakes, a 2-node flex-start gang that waits 90 minutes after its launch is
charged nothing while it waits, then each node from when Compute Engine says it began
running (both 90 minutes in, or one at 60 and one at 90); `status`, the report, the
budgets and `report --billed` against Compute Engine's bill agree, to the cent. A gang
whose wait ends without capacity is charged nothing at all."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

compute_v1 = pytest.importorskip("google.cloud.compute_v1")

from costsched.bills.imports import rematch  # noqa: E402
from costsched.bills.lines import LINE_COLUMNS, finish  # noqa: E402
from costsched.config import BudgetsConfig  # noqa: E402
from costsched.report import build  # noqa: E402
from costsched.report.billed import build_billed  # noqa: E402
from costsched.service import jobs as service  # noqa: E402
from costsched.service.jobs.caps import budget_states  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from costsched.store.bills import BillStore  # noqa: E402
from launchers.gcp import GcpLauncher  # noqa: E402
from tests.launchers.test_gcp_gang import FakePolicies, GangInstances  # noqa: E402

A3 = "a3-highgpu-8g"
ZONE = "us-central1-a"
# A launch steps its move on the clock: the launch is now, the passes after it are told
# their time.
AT = datetime.now(timezone.utc).replace(second=0, microsecond=0)
H = timedelta(hours=1)
FLEX_USD = 47.0  # one a3-highgpu-8g an hour at the flex-start price (the store's row)


def launched(tmp_path: Path) -> tuple[PriceStore, GangInstances, GcpLauncher, int]:
    """A 2-node flex-start H100 job with a $10,000 budget, launched at AT (its nodes are
    asked for; Compute Engine holds them for capacity)."""
    fake = GangInstances()
    launcher = GcpLauncher(project="proj", instances_client=fake,
                           policies_client=FakePolicies(), gang_placement="auto")
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="gcp", region="us-central1", zone=ZONE, instance_type=A3, market="flex_start",
        os="linux", gpu_model="H100", gpu_count=8, vcpus=208, memory_gb=1872.0,
        usd_per_hour=FLEX_USD, effective_at=AT - H, source="test")]))
    path = tmp_path / "flex.yaml"
    path.write_text(yaml.safe_dump({
        "name": "flex-gang", "run": "torchrun train.py", "num_nodes": 2,
        "throughputs": {"H100:8": 1.0}, "steps": 40 * 3600,
        "constraints": {"clouds": ["gcp"], "markets": ["flex_start"], "budget": 10000,
                        "gpu_models": ["H100"], "gpu_counts": [8]}}))
    [job] = service.launch(store, [path], launcher=launcher, at=AT,
                           checkpoint_root=str(tmp_path / "ckpts"))
    for made in fake.store.values():
        made.status = "PENDING"  # waiting for capacity
    return store, fake, launcher, job.id


def run_nodes(fake: GangInstances, *starts: datetime) -> None:
    """Compute Engine starts the nodes (rank order) at `starts` (RFC 3339, its own zone)."""
    made = sorted(fake.store.values(), key=lambda i: i.name)
    for record, start in zip(made, starts, strict=True):
        record.status = "RUNNING"
        record.last_start_timestamp = start.astimezone(
            timezone(timedelta(hours=-8))).isoformat(timespec="milliseconds")


def cost_now(store: PriceStore, launcher: GcpLauncher, job: int, at: datetime) -> float:
    (shown,) = service.status(store, launcher, job, at=at,
                              reconcile_first=False)
    return shown.cost.total_usd


def spent(store: PriceStore, at: datetime) -> float:
    [state] = budget_states(store, BudgetsConfig(), at, 60.0)
    return state.spent_usd


def test_a_gang_that_waits_90_minutes_is_charged_from_running_per_node(
        tmp_path: Path) -> None:
    store, fake, launcher, job = launched(tmp_path)
    # Waiting: placed (it shows where it waits), charged nothing.
    service.reconcile(store, launcher, at=AT + 0.5 * H)
    placed = store.jobs.placements(job)
    assert placed["market"].tolist() == ["flex_start"] and placed["waiting"].tolist() == [True]
    # The placement keeps one instance's price, as every offering is quoted: charged per
    # node, a gang's total here would be charged twice over where no stored price is.
    assert placed["usd_per_hour"].tolist() == [FLEX_USD]
    assert cost_now(store, launcher, job, AT + H) == 0.0
    assert spent(store, AT + H) == 0.0
    assert build(store, now=AT + H).jobs["usd"].sum() == 0.0

    # Both nodes run from 1:30 in; costsched sees it at 1:35, charges from 1:30.
    run_nodes(fake, AT + 1.5 * H, AT + 1.5 * H)
    service.reconcile(store, launcher, at=AT + 1.5 * H + timedelta(minutes=5))
    assert store.jobs.get(job).state == "running"
    placed = store.jobs.placements(job)
    assert placed["start_at"].tolist() == [pd.Timestamp(AT + 1.5 * H)]
    assert placed["waiting"].tolist() == [False]
    charged_from = (AT + 1.5 * H).isoformat().replace("+00:00", "Z")
    assert f"placement 1: its instance runs: charged from {charged_from}" in \
        store.jobs.events(job)["detail"].tolist()

    now = AT + 3.5 * H  # two hours of running
    expected = 2 * FLEX_USD * 2.0  # two nodes, two hours each
    assert cost_now(store, launcher, job, now) == pytest.approx(expected)
    assert spent(store, now) == pytest.approx(expected)
    report = build(store, now=now)
    assert report.jobs["usd"].sum() == pytest.approx(expected)
    assert report.jobs["billed_hours"].sum() == pytest.approx(2.0)

    # Compute Engine's bill: each node from 1:30 in, a line per clock hour, as a bill has
    # them (a line never spans midnight UTC, whatever time of day the test runs at).
    nodes = sorted(fake.store.values(), key=lambda i: i.name)
    lo, hi = pd.Timestamp(AT + 1.5 * H), pd.Timestamp(AT + 3.5 * H)
    edges = [lo, *pd.date_range(lo.ceil("h"), hi, freq="h", inclusive="left"), hi]
    spans = [(a, b) for a, b in zip(edges, edges[1:], strict=False) if b > a]
    rows = [{"cloud": "gcp", "account": "proj", "source": "test", "line_key": "",
             "usage_start": a, "usage_end": b, "resource_id": node.name,
             "category": "compute", "line_type": "", "service": "Compute Engine",
             "usage_type": "", "region": "us-central1",
             "usage_amount": (b - a) / pd.Timedelta(hours=1), "usage_unit": "h",
             "usd": FLEX_USD * ((b - a) / pd.Timedelta(hours=1)), "currency": "USD",
             "job_tag": str(job), "attempt_tag": ""} for a, b in spans for node in nodes]
    BillStore(store.engine).replace("test", finish(pd.DataFrame(rows, columns=LINE_COLUMNS)),
                                    at=now)
    rematch(store, now=now)
    billed = build_billed(store, now=now, threshold=0.01).jobs.set_index("job_id")
    assert billed.loc[job, "billed_usd"] == pytest.approx(expected)
    assert billed.loc[job, "estimated_usd"] == pytest.approx(expected)
    assert not billed.loc[job, "flagged"]
    store.dispose()


def test_nodes_that_start_apart_are_each_charged_from_their_own_start(
        tmp_path: Path) -> None:
    store, fake, launcher, job = launched(tmp_path)
    run_nodes(fake, AT + 1.0 * H, AT + 1.5 * H)
    service.reconcile(store, launcher, at=AT + 2 * H)
    now = AT + 3.5 * H
    # Node 0 billed 2.5 hours, node 1 two hours.
    assert cost_now(store, launcher, job, now) == pytest.approx(FLEX_USD * (2.5 + 2.0))
    assert build(store, now=now).jobs["usd"].sum() == pytest.approx(FLEX_USD * 4.5)
    store.dispose()


def test_a_start_the_cloud_does_not_say_is_when_it_was_seen_running(tmp_path: Path) -> None:
    store, fake, launcher, job = launched(tmp_path)
    for made in fake.store.values():
        made.status = "RUNNING"  # no lastStartTimestamp
    service.reconcile(store, launcher, at=AT + 1.5 * H)
    assert store.jobs.placements(job)["start_at"].tolist() == [pd.Timestamp(AT + 1.5 * H)]
    assert cost_now(store, launcher, job, AT + 2.5 * H) == pytest.approx(2 * FLEX_USD)
    store.dispose()


def test_a_gang_whose_wait_ends_without_capacity_costs_nothing(tmp_path: Path) -> None:
    store, fake, launcher, job = launched(tmp_path)
    for key in list(fake.store):  # its request expired: Compute Engine deleted the nodes
        del fake.store[key]
    fake.get_serial_port_output = lambda **_: compute_v1.SerialPortOutput(contents="")  # type: ignore[attr-defined]
    service.reconcile(store, launcher, at=AT + 2 * H)
    placed = store.jobs.placements(job)
    assert placed["end_at"].notna().all() and placed["waiting"].tolist() == [True]
    assert cost_now(store, launcher, job, AT + 3 * H) == 0.0
    assert build(store, now=AT + 3 * H).jobs["usd"].sum() == 0.0
    store.dispose()
