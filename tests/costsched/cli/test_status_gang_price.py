"""A gang's price, one basis everywhere: a placement keeps one instance's price (as every
offering is quoted), its charge counts its N nodes, and `status` (text and --json) and
the dashboard compare like with like. A 2-node job on the local launcher (real agents, a
real SQLite store) with its price imported by `prices import`: no price changed, so no
line says it was charged at another price, and its dollars are its hours at the gang's
price; a price that changes while a gang runs is said for its 2 nodes, both figures."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.costs import rate_words, repriced
from costsched.dashboard.render import charged_rate
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.local import LocalLauncher

PRICE = 0.15  # one g4dn.xlarge's spot price, as imported
CSV = ("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,memory_gb,"
       "usd_per_hour,effective_at,source\n"
       "aws,us-west-2,us-west-2a,g4dn.xlarge,spot,linux,T4,1,4,16.0,{price},{at},own\n")


def _status(db: str, *args: str) -> str:
    shown = CliRunner().invoke(app, ["status", *args, "--db", db, "--no-reconcile"],
                               env={"COLUMNS": "250"})
    assert shown.exit_code == 0, shown.output
    return shown.stdout


def _imported(tmp_path: Path) -> str:
    db = str(tmp_path / "store.sqlite")
    at = (datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    (tmp_path / "mine.csv").write_text(CSV.format(price=PRICE, at=at))
    done = CliRunner().invoke(app, ["prices", "import", str(tmp_path / "mine.csv"),
                                    "--new-store", "--db", db])
    assert done.exit_code == 0, done.output
    return db


def _pair(tmp_path: Path, deadline: str) -> Path:
    """A job of two nodes that runs a few seconds (the store keeps whole seconds)."""
    path = tmp_path / "pair.yaml"
    path.write_text("name: pair\nnum_nodes: 2\nrun: sleep 3\nsteps: 1500\n"
                    "throughputs: {T4: 20}\nconstraints:\n  gpu_models: [T4]\n"
                    + (f"  deadline: {deadline}\n" if deadline else ""))
    return path


@pytest.mark.parametrize("deadline", ["8h", ""])  # the deadline's decider and the planner's
def test_a_two_node_launch_reads_at_its_own_price_and_costs_hours_at_the_gangs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deadline: str) -> None:
    db = _imported(tmp_path)
    store = PriceStore(db)
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.2)
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(launcher.base_dir))
    try:
        [job] = service.launch(store, _pair(tmp_path, deadline), launcher=launcher,
                               wait_seconds=20, checkpoint_root=str(tmp_path / "ckpt"))
        for _ in range(600):  # until its command exits on both nodes
            service.reconcile(store, launcher)
            if store.jobs.get(job.id).final:
                break
            time.sleep(0.1)
        assert store.jobs.get(job.id).state == "succeeded", store.jobs.events(job.id)
        [candidate, *_] = store.moves.of_job(job.id)[0].candidates
        assert candidate["usd_per_hour"] == pytest.approx(PRICE)  # one instance's
    finally:
        for instance in launcher.instances():
            launcher.terminate(instance.id)
        store.dispose()

    [placed] = json.loads(_status(db, "pair", "--json"))["jobs"][0]["placements"]
    assert placed["nodes"] == 2 and placed["hours"] > 0
    assert placed["usd_per_hour"] == pytest.approx(PRICE)  # as imported: each node's
    assert placed["charged_usd_per_hour"] == pytest.approx(PRICE)  # the same basis
    assert placed["usd"] == pytest.approx(placed["hours"] * 2 * PRICE)  # the gang's price
    assert charged_rate(placed, "/h") == "$0.3000/h for 2 nodes"  # the dashboard's cell

    text = _status(db, "pair")
    assert "charged from" not in text and "when placed" not in text, text
    [line] = [x for x in text.splitlines() if "launch on aws us-west-2a" in x]
    hours, rest = line.split(": billed ")[1].split(" h x $")
    price, usd = rest.split("/h for 2 nodes = $")  # the gang's price: every node's
    assert float(price) == pytest.approx(2 * PRICE), line
    # (the amount at four decimals: within half a unit of its last)
    assert float(usd) == pytest.approx(float(hours) * 2 * PRICE, abs=5e-5), line


def test_a_gang_repriced_while_it_ran_says_both_prices_for_its_nodes(tmp_path: Path) -> None:
    """Placed at $0.20/h a node; $0.40/h a node from its second hour: charged $0.60/h for
    its 2 nodes on average, beside the $0.40/h of its 2 nodes when placed."""
    from tests.costsched.test_costs import EAST_A

    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    now = datetime.now(timezone.utc)
    start = now - timedelta(hours=2)
    _price_from(store, EAST_A, start - timedelta(days=1), 0.20)
    spec = {"name": "pair", "run": "true", "steps": 10, "throughputs": {"V100": 100},
            "num_nodes": 2, "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}}
    job = store.jobs.create("pair", {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            checkpoint_location=str(tmp_path / "ckpt"), at=start)
    store.jobs.transition(job, "running", at=start)
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=start,
                     usd_per_hour=0.20, reason="launch", instance=f"{job}-1")
    store.jobs.end_placement(job, now)
    store.jobs.transition(job, "succeeded", at=now)
    _price_from(store, EAST_A, now - timedelta(hours=1), 0.40)
    store.dispose()

    [placed] = json.loads(_status(db, "pair", "--json"))["jobs"][0]["placements"]
    assert placed["usd_per_hour"] == pytest.approx(0.20)  # each node's, when placed
    assert placed["charged_usd_per_hour"] == pytest.approx(0.30)  # each node's, charged
    assert placed["usd"] == pytest.approx(2 * 2 * 0.30)  # 2 h x 2 nodes x $0.30
    said = "$0.6000/h for 2 nodes on average ($0.4000/h when placed)"
    assert charged_rate(placed, "/h") == said
    lines = [x.strip() for x in _status(db, "pair").splitlines() if "charged from" in x]
    assert lines == [f"job {job}: launch on aws us-east-1a p3.2xlarge spot is charged from "
                     f"the stored prices of its time: {said}"], lines


def _price_from(store: PriceStore, key: tuple, at: datetime, usd_per_hour: float) -> None:
    import pandas as pd

    cloud, region, zone, instance_type, market, os_name = key
    store.ingest(pd.DataFrame([dict(
        cloud=cloud, region=region, zone=zone, instance_type=instance_type, market=market,
        os=os_name, gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=usd_per_hour, effective_at=at, source="test")]))


def test_one_rule_says_whether_a_placement_was_repriced() -> None:
    """`status` and the dashboard ask the same question of the same figures: each node's
    price when placed against each node's charged on average, as written for its nodes."""
    assert not repriced(0.15, 0.15, 2) and not repriced(0.15, float("nan"), 2)
    assert not repriced(0.15, None) and repriced(0.15, 0.2)
    # As they read, each at its own decimals: a float's error off the price is that price,
    # a price of six decimals is not the $0.1500 charged (never both '$0.1500').
    assert repriced(0.15, 0.15 * (1 + 1e-12), 1) is False
    assert repriced(0.150004, 0.15, 1) is True  # $0.150004 against $0.1500
    assert repriced(0.15004, 0.15, 2) is True  # for the two: $0.30008 against $0.3000
    assert rate_words(0.92, 0.92) == "$0.9200"
    assert rate_words(0.92, 2.75, 1, "/h") == "$2.7500/h on average ($0.9200/h when placed)"
    assert rate_words(0.2, 0.3, 2) == "$0.6000 for 2 nodes on average ($0.4000 when placed)"


def test_a_gang_without_a_stored_or_listed_price_counts_each_node_at_its_own(
        tmp_path: Path) -> None:
    """The charge's last resort, the price a gang's placement recorded: one instance's,
    counted for each of its nodes."""
    from costsched.costs import job_costs

    store = PriceStore(str(tmp_path / "store.sqlite"))
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    nowhere = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
    job = store.jobs.create("pair", {"spec": {"name": "pair", "num_nodes": 2}}, 10, at=start)
    store.jobs.place(job, nowhere, gpu_model="V100", gpu_count=1, at=start,
                     usd_per_hour=0.25, reason="launch", instance="p-1")
    store.jobs.end_placement(job, start + timedelta(hours=2))
    cost = job_costs(store, [job], now=start + timedelta(hours=3), checkpoint_gb={job: 0.0},
                     nodes={job: 2})[job]
    [charged] = cost.charged
    assert charged.price_source == "placement"
    assert charged.usd == pytest.approx(2 * 2 * 0.25)  # 2 h x 2 nodes x each node's price
    assert charged.charged_usd_per_hour == pytest.approx(0.25)
    assert not repriced(charged.usd_per_hour, charged.charged_usd_per_hour, charged.nodes)
    store.dispose()
