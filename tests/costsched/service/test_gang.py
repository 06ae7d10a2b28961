"""A SkyPilot task of two nodes, end to end on the local launcher: planned at twice the
price, launched as two real agents that see their ranks and addresses, and, after one of its
nodes is preempted, finished with the result of a run that never stopped. Real
subprocesses, a real SQLite store, a real checkpoint store, TCP between the nodes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from costsched.cli import app
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service import plan
from costsched.store import PriceStore
from launchers import gang
from launchers.checkpoints import open_store
from launchers.local import LocalLauncher
from launchers.procfs import group_members
from tests.real_jobs import SETTLE

ROOT = Path(__file__).resolve().parents[3]
TRAIN = ROOT / "examples" / "multinode" / "train.py"
STEPS = 400
TRAIN_ARGS = f"--steps {STEPS} --checkpoint-every 20"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def task(tmp_path: Path, port: int, step_seconds: float) -> Path:
    doc = {
        "name": "gang",
        "num_nodes": 2,
        "resources": {"accelerators": "V100:1", "infra": "aws/us-east-1", "use_spot": True},
        "envs": {"GANG_PORT": str(port)},
        "run": f"{sys.executable} {TRAIN} {TRAIN_ARGS} --step-seconds {step_seconds}",
        "costsched": {"throughputs": {"V100": 0.01}, "steps": STEPS,
                      "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}},
    }
    path = tmp_path / "gang.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def uninterrupted(tmp_path: Path) -> dict:
    """The same two nodes run by hand, never stopped."""
    port, out = free_port(), tmp_path / "reference"
    env = {**os.environ, "SKYPILOT_NUM_NODES": "2", "GANG_PORT": str(port),
           "SKYPILOT_NODE_IPS": "127.0.0.1\n127.0.0.1"}
    worker = subprocess.Popen([sys.executable, str(TRAIN), *TRAIN_ARGS.split()],
                              env={**env, "SKYPILOT_NODE_RANK": "1"})
    subprocess.run([sys.executable, str(TRAIN), *TRAIN_ARGS.split(), "--checkpoint-dir",
                    str(out)], env={**env, "SKYPILOT_NODE_RANK": "0"}, check=True,
                   capture_output=True)
    assert worker.wait(SETTLE) == 0
    return json.loads((out / "result.json").read_text())


def wait_for(predicate, seconds: float = SETTLE, poll: float = 0.1):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError("timed out")


def agents_alive(base: Path) -> int:
    """Agents alive under the launcher's base directory: every node of every instance."""
    count = 0
    for folder in base.glob("*-*"):
        for where in [folder, *(gang.node_folder(folder, r) for r in gang.ranks(folder))]:
            name = "instance.json" if where == folder else gang.NODE
            pid = gang.read_json(where / name).get("pid")
            if pid and group_members(pid):
                count += 1
    return count


class NodeCounter(threading.Thread):
    def __init__(self, base: Path) -> None:
        super().__init__(daemon=True)
        self.base, self.most, self.stopped = base, 0, False

    def run(self) -> None:
        while not self.stopped:
            self.most = max(self.most, agents_alive(self.base))
            time.sleep(0.02)


@pytest.fixture()
def world(tmp_path: Path):  # noqa: ANN201
    store = PriceStore(str(tmp_path / "store.sqlite"))
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.2)
    at = datetime.now(timezone.utc) - timedelta(hours=1)
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=1.25, effective_at=at, source="test")]))
    yield store, launcher, tmp_path
    for instance in launcher.instances():
        launcher.terminate(instance.id)
    store.dispose()


def test_a_two_node_task_plans_at_twice_the_price_and_n_times_the_hazard(world) -> None:
    store, _, tmp = world
    path = task(tmp, free_port(), 0.0)
    two = plan(store, path).ranking(0)
    one_doc = yaml.safe_load(path.read_text())
    one_doc.pop("num_nodes")
    (tmp / "one.yaml").write_text(yaml.safe_dump(one_doc))
    one = plan(store, tmp / "one.yaml").ranking(0)
    a, b = two.iloc[0], one.iloc[0]
    assert a["nodes"] == 2 and b["nodes"] == 1
    assert a["usd_per_hour"] == pytest.approx(2 * 1.25) and b["usd_per_hour"] == 1.25
    assert a["preemptions_per_hour"] == pytest.approx(2 * b["preemptions_per_hour"])
    assert a["expected_cost"] > 2 * b["expected_cost"] * 0.999  # N times, and more restarts


def test_a_two_node_task_runs_as_two_nodes_and_succeeds(world, monkeypatch) -> None:
    store, launcher, tmp = world
    expected = uninterrupted(tmp)
    # At least 2 s of training: the store keeps whole seconds, and the charge is checked.
    [job] = service.launch(store, task(tmp, free_port(), 0.005), launcher=launcher,
                           wait_seconds=SETTLE, checkpoint_root=str(tmp / "checkpoints"))

    def finished() -> bool:
        service.reconcile(store, launcher)
        return store.jobs.get(job.id).final

    wait_for(finished)
    assert store.jobs.get(job.id).state == "succeeded", store.jobs.events(job.id)
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    assert "rank 0 of 2: from step 0" in launcher.logs(instance, node=0)
    assert "rank 1: from step 0" in launcher.logs(instance, node=1)
    [now] = service.status(store, launcher, job.id)
    assert now.nodes == 2
    placed = now.cost.placements  # each of its two instances charged at the stored price
    assert placed["usd"].sum() > 0
    assert placed["usd"].tolist() == pytest.approx((2 * 1.25 * placed["hours"]).tolist())
    # `costsched logs JOB --node 1`, and status's nodes in its table and JSON
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(launcher.base_dir))
    db = ["--db", str(tmp / "store.sqlite")]
    shown = CliRunner().invoke(app, ["logs", str(job.id), "--node", "1", *db])
    assert shown.exit_code == 0 and "rank 1: from step 0" in shown.output
    assert "rank 0 of 2" not in shown.output
    shown = CliRunner().invoke(app, ["logs", str(job.id), "--node", "2", *db])
    assert shown.exit_code != 0 and "no node 2" in shown.output
    shown = CliRunner().invoke(app, ["status", str(job.id), "--json", *db])
    assert json.loads(shown.output)["jobs"][0]["nodes"] == 2
    shown = CliRunner().invoke(app, ["status", str(job.id), *db], env={"COLUMNS": "200"})
    assert "gang (2 nodes)" in shown.output
    checkpoints = open_store(store.jobs.get(job.id).checkpoint_location)
    result = [c for c in checkpoints.list()
              if "result.json" in {p.name for p in c.parts}][-1]
    checkpoints.fetch(result, tmp / "final")
    assert json.loads((tmp / "final" / "result.json").read_text()) == expected
    # `report`: the job's nodes, each charged from the stored price
    from costsched.report import build as build_report

    [row] = build_report(store, job=job.id).jobs.to_dict("records")
    assert row["nodes"] == 2 and row["billed_hours"] > 0
    assert row["compute_usd"] == pytest.approx(2 * 1.25 * row["billed_hours"])
    shown = CliRunner().invoke(app, ["report", "--job", str(job.id), "--json", *db])
    assert json.loads(shown.output)["jobs"][0]["nodes"] == 2


def test_the_daemon_says_a_gangs_nodes(world, caplog) -> None:
    import logging

    from costsched.config import Config
    from costsched.daemon import Daemon

    store, launcher, tmp = world
    caplog.set_level(logging.INFO, logger="costsched.daemon")
    [job] = service.launch(store, task(tmp, free_port(), 0.05), launcher=launcher,
                           wait_seconds=SETTLE, checkpoint_root=str(tmp / "checkpoints"))
    daemon = Daemon(store, Config(), tasks=("replan",), launchers=lambda _: launcher,
                    settle_seconds=5)
    daemon.replan()
    [stays] = [r.getMessage() for r in caplog.records if "event=stays" in r.getMessage()]
    assert f"job={job.id} nodes=2 " in stays


def rank0_pid(launcher: LocalLauncher, instance: str) -> int:
    return gang.read_json(launcher.base_dir.resolve() / instance / "instance.json")["pid"]


def preempted_gang(store: PriceStore, launcher: LocalLauncher, tmp: Path,
                   capacity: bool = True) -> tuple[int, str, int, NodeCounter]:
    """A two-node job launched, one of its nodes preempted once rank 0 has published a
    checkpoint: (job id, its instance, rank 0's agent pid, the agents' counter)."""
    counter = NodeCounter(launcher.base_dir)
    counter.start()
    [job] = service.launch(store, task(tmp, free_port(), 0.02), launcher=launcher,
                           wait_seconds=SETTLE, checkpoint_root=str(tmp / "checkpoints"))
    checkpoints = open_store(store.jobs.get(job.id).checkpoint_location)
    wait_for(checkpoints.newest_verified)  # it trains and rank 0 publishes
    first = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    rank0 = rank0_pid(launcher, first)
    launcher.preempt_node(first, 1, capacity=capacity)
    return job.id, first, rank0, counter


def finish(store: PriceStore, launcher: LocalLauncher, job_id: int) -> None:
    def finished() -> bool:
        service.reconcile(store, launcher)
        return store.jobs.get(job_id).final

    wait_for(finished, seconds=120, poll=0.3)


def result(store: PriceStore, job_id: int, tmp: Path) -> dict:
    checkpoints = open_store(store.jobs.get(job_id).checkpoint_location)
    found = [c for c in checkpoints.list() if "result.json" in {p.name for p in c.parts}][-1]
    checkpoints.fetch(found, tmp / "final")
    return json.loads((tmp / "final" / "result.json").read_text())


@pytest.mark.results
def test_preempting_one_node_keeps_the_other_and_ends_with_an_uninterrupted_result(
        world) -> None:
    store, launcher, tmp = world
    expected = uninterrupted(tmp)
    job_id, first, rank0, counter = preempted_gang(store, launcher, tmp)
    seen = launcher.status(first)  # rank 0 waits, kept, for the lost node's replacement
    assert seen.state == "running" and seen.lost_nodes == (1,)
    finish(store, launcher, job_id)
    counter.stopped = True
    assert store.jobs.get(job_id).state == "succeeded", store.jobs.events(job_id)
    placed = store.jobs.placements(job_id)
    assert list(placed["reason"]) == ["launch"]  # repaired in place: no recovery move
    assert rank0_pid(launcher, first) == rank0  # the surviving node is the same agent
    log = launcher.logs(first, node=0)
    starts = [int(x.split()[0]) for x in log.split("rank 0 of 2: from step ")[1:]]
    assert len(starts) == 2 and starts[0] == 0  # round 1, then round 2 from a checkpoint
    resumed = starts[1]
    assert resumed > 0
    assert f"rank 1: from step {resumed}" in launcher.logs(first, node=1)  # the new node
    events = " ".join(str(e) for e in store.jobs.events(job_id)["detail"])
    assert f"instance {first}: node 1 was preempted: replaced in us-east-1a" in events
    # the step it resumed from, as a single job's recovery says it
    assert "resumes from its newest checkpoint (round 2)" in events
    assert f"node 1: resumes from step {resumed:,} (its checkpoint's)" in events
    preempted = store.availability.since(event="preempted")
    assert list(preempted["detail"]) == [f"instance {first} node 1"]  # counted once
    assert 0 < counter.most <= 2  # N: the lost node's agent is gone before its replacement
    placed_cost = service.status(store, launcher, job_id)[0].cost.placements
    assert placed_cost["usd"].tolist() == pytest.approx(  # one placement, two nodes
        (2 * 1.25 * placed_cost["hours"]).tolist())
    assert result(store, job_id, tmp) == expected


@pytest.mark.results
def test_a_node_that_cannot_be_replaced_where_it_ran_moves_the_gang(world) -> None:
    store, launcher, tmp = world
    store.ingest(pd.DataFrame([dict(  # another zone where two nodes fit
        cloud="aws", region="us-east-1", zone="us-east-1b", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=1.30, effective_at=datetime.now(timezone.utc) - timedelta(hours=1),
        source="test")]))
    expected = uninterrupted(tmp)
    job_id, first, _, counter = preempted_gang(store, launcher, tmp, capacity=False)
    finish(store, launcher, job_id)
    counter.stopped = True
    assert store.jobs.get(job_id).state == "succeeded", store.jobs.events(job_id)
    placed = store.jobs.placements(job_id)
    assert list(placed["reason"]) == ["launch", "recovery"]
    assert list(placed["zone"]) == ["us-east-1a", "us-east-1b"]  # where N nodes fit
    last = str(placed["instance"].iloc[-1])
    assert "from step 0" not in launcher.logs(last, node=0)  # resumed from a checkpoint
    assert 0 < counter.most <= 4  # never more than 2N agents alive
    seen = store.availability.since()
    assert list(seen["event"]).count("preempted") == 1  # the lost node, counted once
    assert "capacity" in list(seen["event"])  # and the zone that had none for it
    assert result(store, job_id, tmp) == expected


def test_a_launcher_that_starts_one_instance_a_job_refuses_a_gang(world) -> None:
    store, _, tmp = world

    class OneInstance(LocalLauncher):
        name = "single"
        runs_gangs = False

    with pytest.raises(InvalidInput, match=r"gang.yaml: field num_nodes: 2: the single "
                       "launcher starts one instance a job"):
        service.launch(store, task(tmp, free_port(), 0.0), launcher=OneInstance(tmp / "x"))
    assert store.jobs.list().empty  # nothing stored, nothing started


def test_a_gang_is_decided_at_n_instances_price_and_hazard_its_egress_once(world) -> None:
    store, _, tmp = world
    from costsched.jobspec import resolve
    from costsched.service.decide import Ask, decide_all
    from costsched.taskfile import load
    from costsched.throughput import ThroughputTable

    store.ingest(pd.DataFrame([dict(  # a cheaper zone in another region: a move is priced
        cloud="aws", region="us-west-2", zone="us-west-2a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.25, effective_at=datetime.now(timezone.utc) - timedelta(hours=1),
        source="test")]))
    [spec] = load(task(tmp, free_port(), 0.0))
    resolved = resolve(spec, ThroughputTable.load(), datetime.now(timezone.utc))
    job = replace(resolved.job, constraints=replace(resolved.job.constraints, regions=()))
    here = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
    one, two = decide_all(store, [Ask(job, "us-east-1", here, table=resolved.table),
                                  Ask(job, "us-east-1", here, table=resolved.table,
                                      nodes=2)], margin=0.0)
    # Each priced at one instance's price, as a placement records it (the gang's N are in
    # its costs): a move records the price every offering is quoted at.
    assert two.usd_per_hour == pytest.approx(one.usd_per_hour)
    assert two.stay_usd > 2 * one.stay_usd  # twice the price, and more restarts
    assert one.move is not None and two.move is not None
    assert one.move.egress_usd > 0  # copied once, whatever the nodes
    assert two.move.egress_usd == pytest.approx(one.move.egress_usd)


def test_a_gangs_restart_is_the_boot_and_the_rendezvous(world) -> None:
    from costsched.jobspec import resolve
    from costsched.optimize.decision import Overheads
    from costsched.service.decide import Ask, decide_all
    from costsched.taskfile import load
    from costsched.throughput import ThroughputTable

    one_node, gang_of_two = Overheads(), Overheads().gang(2)
    assert gang_of_two.restart_hours(1.0) == pytest.approx(
        one_node.restart_hours(1.0) + one_node.rendezvous_minutes / 60)
    assert gang_of_two.gang(2) == gang_of_two  # once: a gang's overheads are not stacked
    assert Overheads().gang(1) == one_node and Overheads.free().gang(8).restart_hours(1) == 0
    store, _, tmp = world
    [spec] = load(task(tmp, free_port(), 0.0))
    at = datetime.now(timezone.utc)
    two = resolve(spec, ThroughputTable.load(), at)
    one = resolve(spec.model_copy(update={"num_nodes": 1}), ThroughputTable.load(), at)
    assert two.restart_hours == pytest.approx(one.restart_hours + 3 / 60)
    store.ingest(pd.DataFrame([dict(  # somewhere to move to: the move's restart is priced
        cloud="aws", region="us-east-1", zone="us-east-1b", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.25, effective_at=at - timedelta(hours=1), source="test")]))
    here = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
    alone, gang_move = decide_all(store, [Ask(two.job, "us-east-1", here, table=two.table),
                                          Ask(two.job, "us-east-1", here, table=two.table,
                                              nodes=2)], margin=0.0)
    assert alone.move is not None and gang_move.move is not None
    assert gang_move.move.restart_usd == pytest.approx(  # N instances idle, the rendezvous too
        2 * alone.move.restart_usd * gang_of_two.restart_hours(1.0)
        / one_node.restart_hours(1.0))
