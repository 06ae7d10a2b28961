"""A SkyPilot task of two nodes (no `costsched:` section) on the local launcher whose node
1 is preempted, rank 0's job then exiting 0 before any watch pass sees the loss: the job
fails (node 1's job did not run to the end), and the loss is said everywhere: the
failure in `status` and `status --json`, the job's log, `logs --all`, the report, the
offering's preemptions. Real agents, a real SQLite store."""

from __future__ import annotations

import time

import yaml

from costsched.model import NODE_RECOVERY
from costsched.report import build
from costsched.service import jobs as service
from costsched.service.jobs.gangs import EVENT
from costsched.service.views import status_document
from launchers import gang
from tests.costsched.service.test_gang import world  # noqa: F401


def test_a_node_lost_before_rank_0_ends_fails_the_job_and_is_said(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    go = tmp / "go"
    path = tmp / "bigram-gang2.yaml"
    path.write_text(yaml.safe_dump({
        "name": "bigram-gang2", "num_nodes": 2,
        "resources": {"accelerators": "V100:1", "infra": "aws/us-east-1", "use_spot": True},
        "run": f'if [ "$SKYPILOT_NODE_RANK" = 0 ]; then while [ ! -e {go} ]; do sleep 0.05;'
               ' done; echo rank0-done; else echo node1-started; exec sleep 60; fi'}))
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    folder = launcher.base_dir.resolve() / instance
    launcher.preempt_node(instance, 1)
    go.touch()
    deadline = time.monotonic() + 60  # rank 0 ends before any pass looks
    while gang.read_json(folder / "status.json").get("state", "running") == "running" \
            and time.monotonic() < deadline:
        time.sleep(0.05)

    said = service.reconcile(store, launcher)
    [line] = [e for e in said if e.job_id == job.id]
    assert line.kind == "failed" and line.notify == "failure"
    assert "node 1 was preempted and not replaced before rank 0's job exited 0" in line
    record = store.jobs.get(job.id)
    assert record.state == "failed"
    log = store.jobs.events(job.id)
    [kept] = log[log["kind"] == EVENT]["detail"].tolist()
    assert kept == (f"instance {instance}: node 1 was preempted and not replaced before the "
                    "job's end")
    assert log[log["kind"] == NODE_RECOVERY].empty  # nothing was recovered
    failed = log[(log["kind"] == "state") & (log["detail"].str.contains("node 1"))]
    assert len(failed) == 1

    (shown,) = service.status(store, launcher, job.id, reconcile_first=False)
    assert "node 1 was preempted" in shown.failure.detail and shown.failure.exit_code is None
    [doc] = status_document([shown])
    assert doc["state"] == "failed" and "node 1 was preempted" in doc["failure"]["detail"]
    assert doc["recoveries"] == 0 and doc["node_recoveries"] == []

    every = service.every_log(store, launcher, job.id)
    assert f"--- instance {instance}, node 1, lost in round 1, not replaced\n" in every
    assert ", failed " in every.splitlines()[0]
    [row] = build(store, job=job.id).jobs.to_dict("records")
    assert row["state"] == "failed"
    preempted = store.availability.since(event="preempted")  # the offering's record
    assert preempted["detail"].tolist() == [f"instance {instance} node 1"]
