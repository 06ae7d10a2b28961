"""Throughputs measured by costsched from its jobs' progress: stored per run, the median
of the newest runs used by the next plan (never over the user's own figure), shown and
forgotten."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched import service
from costsched.jobspec import parse
from costsched.service import throughputs
from costsched.store import PriceStore
from costsched.throughput import MEASURED_BY_COSTSCHED, ThroughputTable

AT = datetime(2026, 11, 20, 12, tzinfo=timezone.utc)
MODEL = "ResNet-50 (batch size 64)"
T4 = ("aws", "us-east-1", "us-east-1a", "g4dn.xlarge", "spot", "linux")


def offer(key: tuple, gpu: str, price: float) -> dict:
    cloud, region, zone, kind, market, os_ = key
    return dict(cloud=cloud, region=region, zone=zone, instance_type=kind, market=market,
                os=os_, gpu_model=gpu, gpu_count=1, vcpus=8, memory_gb=32.0,
                usd_per_hour=price, effective_at=AT - timedelta(days=2), source="test")


@pytest.fixture()
def market(store: PriceStore) -> PriceStore:
    store.ingest(pd.DataFrame([
        offer(T4, "T4", 0.25),
        offer(("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux"), "V100", 0.90),
    ]))
    return store


def run_on_t4(store: PriceStore, steps_per_second: float, start: datetime,
              name: str = "earlier", spec: dict | None = None) -> int:
    """A finished run of the model on a T4 that reported its steps twice an hour apart."""
    spec = spec or {"name": name, "model": MODEL, "steps": 10_000}
    job = store.jobs.create(name, {"spec": spec, "source": "test"}, 10_000, at=start)
    store.jobs.place(job, T4, gpu_model="T4", gpu_count=1, at=start, usd_per_hour=0.30,
                     reason="launch", instance="i-1")
    # The first record comes after start-up: the time before it does not count.
    store.jobs.record_progress(job, 50, at=start + timedelta(minutes=10))
    store.jobs.record_progress(job, 50 + 3600 * steps_per_second,
                               at=start + timedelta(minutes=70))
    store.jobs.end_placement(job, start + timedelta(minutes=75))
    return job


def best(store: PriceStore, **spec: object) -> pd.Series:
    """The best offering among the store's AWS prices (the bundled GCP prices aside)."""
    job = parse({"name": "next", "model": MODEL, "steps": 200_000,
                 "constraints": {"markets": ["spot"], "clouds": ["aws"]}, **spec})
    return service.plan(store, job, at=AT).ranking("next").iloc[0]


def test_a_runs_measured_throughput_changes_the_next_plan(market: PriceStore) -> None:
    before = best(market)
    # By the datasheet rule a T4 is 0.30x a V100 at 28% of the price: the T4 wins.
    assert before["instance_type"] == "g4dn.xlarge" and before["throughput_estimated"]
    v100 = ThroughputTable.load().get(MODEL, "V100").steps_per_second
    slow = v100 * 0.2  # what the runs on the T4 really did
    run_on_t4(market, slow, AT - timedelta(days=1))
    assert throughputs.learn(market, AT) == 1
    stored = throughputs.measured(market)
    assert stored[["model", "gpu_model", "gpu_count", "precision", "instance"]].values.tolist(
        ) == [[MODEL, "T4", 1, "fp32", "i-1"]]
    assert stored["steps_per_second"].iloc[0] == pytest.approx(slow)
    assert stored["seconds"].iloc[0] == 3600.0

    after = best(market)
    assert after["instance_type"] == "p3.2xlarge"
    t4 = service.plan(market, parse({"name": "next", "model": MODEL, "steps": 200_000}),
                      at=AT).ranking("next")
    t4 = t4[t4["instance_type"] == "g4dn.xlarge"].iloc[0]
    assert t4["steps_per_second"] == pytest.approx(slow) and not t4["throughput_estimated"]
    assert t4["throughput_source"] == f"{MEASURED_BY_COSTSCHED}: median of 1 run, last 2026-11-20"

    # Learning again stores nothing new; the median of the newest runs is used.
    assert throughputs.learn(market, AT) == 0
    run_on_t4(market, slow * 3, AT - timedelta(hours=20), name="second")
    run_on_t4(market, slow * 2, AT - timedelta(hours=10), name="third")
    assert throughputs.learn(market, AT) == 2
    table = throughputs.table_with_measured(market)
    assert table.get(MODEL, "T4").steps_per_second == pytest.approx(slow * 2)


def test_the_users_own_figure_wins(market: PriceStore, tmp_path: Path) -> None:
    run_on_t4(market, 0.5, AT - timedelta(days=1))
    throughputs.learn(market, AT)
    # A job spec's own throughputs are the user's: the learned figure does not override.
    own = best(market, throughputs={"T4": 100.0, "V100": 1.0})
    assert own["instance_type"] == "g4dn.xlarge" and own["steps_per_second"] == 100.0
    from costsched.throughput import save_user

    save_user(pd.DataFrame([(MODEL, "T4", 1, 42.0, "user measured")],
                           columns=["model", "gpu_model", "gpu_count", "steps_per_second",
                                    "source"]))
    assert throughputs.table_with_measured(market).get(MODEL, "T4").steps_per_second == 42.0


def test_show_and_forget(market: PriceStore, cli, db_path: Path) -> None:  # noqa: ANN001
    run_on_t4(market, 0.5, AT - timedelta(days=1))
    throughputs.learn(market, AT)
    shown = json.loads(cli("throughput", "show", "--measured", "--json").stdout)
    assert [(r["model"], r["gpu_model"], r["steps_per_second"]) for r in shown["runs"]] == [
        (MODEL, "T4", 0.5)]
    table = json.loads(cli("throughput", "show", "--gpu", "T4", "--json").stdout)
    mine = [r for r in table["throughputs"] if r["source"].startswith(MEASURED_BY_COSTSCHED)]
    assert [(r["model"], r["steps_per_second"]) for r in mine] == [(MODEL, 0.5)]
    assert "measured by costsched" in cli("throughput", "show", "--gpu", "T4").stdout
    result = cli("throughput", "forget", "resnet50 bs64", "--gpu", "T4", "--json")
    assert json.loads(result.stdout) == {"forgotten": 1}
    assert json.loads(cli("throughput", "show", "--measured", "--json").stdout)["runs"] == []
    # A forgotten run is not learned again.
    assert throughputs.learn(market, AT) == 0
    assert best(market)["throughput_estimated"]
