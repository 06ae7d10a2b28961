"""What `status` says of a two-node job's nodes, on real local gangs (the set-up of
test_gang.py): a gang moved because its lost node could not be replaced, one stopped while
its node was replaced, a lost node no pass has seen, and a node that failed the gang."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from costsched.cli import app
from costsched.service import jobs as service
from launchers.checkpoints import open_store
from tests.costsched.service.test_gang import (  # noqa: F401 - `world`: the fixture
    finish,
    free_port,
    preempted_gang,
    task,
    wait_for,
    world,
)
from tests.real_jobs import SETTLE


@pytest.fixture()
def cli(world, monkeypatch):  # noqa: ANN001, ANN201, F811
    """`costsched ARGS --db STORE` on the world's launcher: its output and exit code."""
    _, launcher, tmp = world
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(launcher.base_dir))

    def run(*args: str) -> tuple[str, int]:
        shown = CliRunner().invoke(app, [*args, "--db", str(tmp / "store.sqlite")],
                                   env={"COLUMNS": "250"})
        return shown.output, shown.exit_code
    return run


def test_a_gang_moved_as_its_node_could_not_be_replaced_says_so_and_where_it_went(
        world, cli) -> None:  # noqa: F811
    store, launcher, tmp = world
    store.ingest(pd.DataFrame([dict(  # another zone where two nodes fit
        cloud="aws", region="us-east-1", zone="us-east-1b", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=1.30, effective_at=datetime.now(timezone.utc) - timedelta(hours=1),
        source="test")]))
    job_id, first, _, counter = preempted_gang(store, launcher, tmp, capacity=False)
    counter.stopped = True

    def moved() -> bool:
        service.reconcile(store, launcher)
        return len(store.jobs.placements(job_id)) > 1

    wait_for(moved)
    said = (f"instance {first}: node 1 could not be replaced in us-east-1a: the gang moved "
            "to aws us-east-1b; the job resumes from step ")
    out, _ = cli("status", str(job_id))
    assert "recovered at " in out and said in " ".join(out.split()), out
    out, _ = cli("status", str(job_id), "--json")
    [recovered] = json.loads(out)["jobs"][0]["recovered"]
    assert recovered["said"].startswith(said)


def test_a_gang_stopped_while_its_node_was_replaced_was_not_recovered(
        world, cli) -> None:  # noqa: F811
    store, launcher, tmp = world
    slow = tmp / "slow"  # the replacement's setup outlasts the pass that starts it
    path = task(tmp, free_port(), 0.02)
    doc = yaml.safe_load(path.read_text())
    doc["setup"] = f"if [ -e {slow} ]; then sleep 60; fi"
    path.write_text(yaml.safe_dump(doc))
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=SETTLE,
                           checkpoint_root=str(tmp / "checkpoints"))
    job_id = job.id
    wait_for(open_store(store.jobs.get(job_id).checkpoint_location).newest_verified)
    slow.touch()
    launcher.preempt_node(str(store.jobs.placements(job_id)["instance"].iloc[-1]), 1)
    service.reconcile(store, launcher)  # node 1 replaced: its setup runs
    out, _ = cli("status", str(job_id))
    assert "the gang resumes once the new node is set up" in out, out
    service.stop(store, launcher, job_id)
    slow.unlink()
    service.start(store, launcher, job_id)
    out, _ = cli("status", str(job_id))
    text = " ".join(out.split())
    assert ("node 1 was preempted: replaced in us-east-1a, the other nodes kept; the job was "
            "stopped before the gang resumed") in text, out
    assert "the gang resumed once" not in text
    [row] = json.loads(cli("status", str(job_id), "--json")[0])["jobs"]
    assert row["recoveries"] == 0 and row["node_recoveries"][0]["stopped_first"]


def test_a_status_that_does_not_reconcile_says_a_gangs_lost_node(world, cli) -> None:  # noqa: F811
    store, launcher, tmp = world
    job_id, first, _, counter = preempted_gang(store, launcher, tmp)
    counter.stopped = True
    out, _ = cli("status", str(job_id), "--no-reconcile")
    assert "running (node 1 lost)" in out, out
    hint = f"`costsched status {job_id}` (without --no-reconcile) replaces it"
    assert (f"instance {first}: node 1 lost: the gang does not train until it is replaced; "
            f"{hint}") in " ".join(out.split())
    assert json.loads(cli("status", str(job_id), "--no-reconcile", "--json")[0]
                      )["jobs"][0]["nodes_lost"] == [1]
    assert not store.jobs.events(job_id)["kind"].isin(["node_recovery", "gang"]).any()
    out, _ = cli("status", str(job_id))  # the hint, as said: it replaces node 1
    assert f"instance {first}: node 1 was preempted: replaced in us-east-1a" in out, out


def test_a_gang_its_node_1_failed_in_setup_says_node_1s_exit_code_and_lines(
        world, cli) -> None:  # noqa: F811
    store, launcher, tmp = world
    path: Path = task(tmp, free_port(), 0.02)
    doc = yaml.safe_load(path.read_text())
    doc["setup"] = 'if [ "$SKYPILOT_NODE_RANK" = 1 ]; then echo "no such wheel"; exit 3; fi'
    doc["run"] = "sleep 60"
    path.write_text(yaml.safe_dump(doc))
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=SETTLE,
                           checkpoint_root=str(tmp / "checkpoints"))
    finish(store, launcher, job.id)
    out, _ = cli("status", str(job.id))
    assert "failed: node 1 failed: setup failed: exit code 3" in out, out
    assert "143" not in out
    hint = f"`costsched logs {job.id} --node 1`"
    assert f"node 1's last 2 lines ({hint} prints its output):" in out
    assert "| no such wheel" in out
    failure = json.loads(cli("status", str(job.id), "--json")[0])["jobs"][0]["failure"]
    assert failure["exit_code"] == 3 and failure["node"] == 1
    out, code = cli("logs", str(job.id), "--node", "1")  # the hint, as said
    assert code == 0 and "no such wheel" in out
