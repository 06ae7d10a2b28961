"""A flex-start gang (num_nodes > 1 on Compute Engine's flex-start) through the gang path,
on the fakes that keep the exact requests: `launch --book` of a plan whose best part is
flex-start asks for every node as flex-start (its run limit and the time it may wait), the
gang shows it waits for capacity while Compute Engine holds any node, it is billed at the
gang's flex-start price (both nodes), and a node lost at its run limit is replaced in place
as flex-start again."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

compute_v1 = pytest.importorskip("google.cloud.compute_v1")

from costsched.service import jobs as service  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers import cloud_gang  # noqa: E402
from launchers.gcp import FLEX_START_SECONDS, FLEX_START_WAIT_SECONDS, GcpLauncher  # noqa: E402
from tests.launchers.test_gcp_gang import FakePolicies, GangInstances  # noqa: E402

A3 = "a3-highgpu-8g"
ZONE = "us-central1-a"
AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
FLEX_USD = 47.0  # one a3-highgpu-8g an hour at the flex-start price (the store's row)


def flex_start_gang(tmp_path: Path) -> tuple[PriceStore, GangInstances, GcpLauncher, int]:
    """A 2-node H100 job due in 96 hours whose best plan is flex-start, launched with
    `launch --book` (the plan's yes given)."""
    fake = GangInstances()
    launcher = GcpLauncher(project="proj", instances_client=fake,
                           policies_client=FakePolicies(), gang_placement="auto")
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="gcp", region="us-central1", zone=ZONE, instance_type=A3, market=market,
        os="linux", gpu_model="H100", gpu_count=8, vcpus=208, memory_gb=1872.0,
        usd_per_hour=usd, effective_at=AT, source="test")
        for market, usd in (("flex_start", FLEX_USD), ("on_demand", 88.49))]))
    path = tmp_path / "flex.yaml"
    path.write_text(yaml.safe_dump({
        "name": "flex-gang", "run": "torchrun train.py", "num_nodes": 2,
        "throughputs": {"H100:8": 1.0}, "steps": 40 * 3600,
        "constraints": {"clouds": ["gcp"], "regions": ["us-central1"], "gpu_models": ["H100"],
                        "gpu_counts": [8], "deadline": "96h"}}))
    asked: list = []
    [job] = service.launch(store, [path], launcher=launcher, at=AT,
                           book=lambda plans: asked.append(plans) or True,
                           checkpoint_root=str(tmp_path / "ckpts"))
    assert asked[0].best.name == f"flex-start {A3} {ZONE}"
    return store, fake, launcher, job.id


def test_every_node_is_asked_for_as_flex_start_and_the_gang_shows_it_waiting(
        tmp_path: Path) -> None:
    store, fake, launcher, job_id = flex_start_gang(tmp_path)
    assert len(fake.inserted) == 2
    for request in fake.inserted:
        assert request.zone == ZONE
        body = request.instance_resource
        assert body.scheduling == compute_v1.Scheduling(
            provisioning_model="FLEX_START", instance_termination_action="DELETE",
            on_host_maintenance="TERMINATE", automatic_restart=False,
            max_run_duration=compute_v1.Duration(seconds=FLEX_START_SECONDS))
        assert body.params.request_valid_for_duration.seconds == FLEX_START_WAIT_SECONDS
    placed = store.jobs.placements(job_id)
    assert placed["market"].tolist() == ["flex_start"]
    assert placed["usd_per_hour"].tolist() == [pytest.approx(FLEX_USD)]  # one node's

    # Compute Engine holds both, then one, for capacity: the gang says it waits for it.
    for made in fake.store.values():
        made.status = "PENDING"
    handle = str(placed["instance"].iloc[-1])
    assert (launcher.status(handle).state, launcher.status(handle).detail) == (
        "pending", "flex-start: waiting for capacity (2 of 2 nodes)")
    fake.store[(ZONE, launcher.nodes(handle)[0].id.split("/")[1])].status = "RUNNING"
    assert launcher.status(handle).detail == "flex-start: waiting for capacity (1 of 2 nodes)"
    (shown,) = service.status(store, launcher, job_id, at=AT)
    assert shown.instance_detail == "flex-start: waiting for capacity (1 of 2 nodes)"
    for made in fake.store.values():
        made.status = "RUNNING"
    assert launcher.status(handle).state == "running"
    store.dispose()


def test_a_node_deleted_at_its_run_limit_is_replaced_in_place_as_flex_start(
        tmp_path: Path) -> None:
    store, fake, launcher, job_id = flex_start_gang(tmp_path)
    handle = str(store.jobs.placements(job_id)["instance"].iloc[-1])
    for made in fake.store.values():
        made.status = "RUNNING"
    service.reconcile(store, launcher)
    rank1 = launcher.nodes(handle)[1].id.split("/")[1]
    del fake.store[(ZONE, rank1)]  # its seven days are up: Compute Engine deleted it
    [said] = service.reconcile(store, launcher)  # the replacement, said once
    assert "node 1 was lost: replaced in " + ZONE + ", the other nodes kept" in said, said
    assert len(fake.inserted) == 3 and len(fake.store) == 2  # one replacement, N alive
    again = fake.inserted[2].instance_resource
    assert again == fake.inserted[1].instance_resource  # flex-start, its limit, its wait
    assert again.scheduling.provisioning_model == "FLEX_START"
    uri = store.jobs.get(job_id).checkpoint_location
    digest = cloud_gang.digest(job_id, launcher.status(handle).attempt)
    cloud_gang.StoreGangFile(uri, digest, 0).left(1, "paused")
    cloud_gang.StoreGangFile(uri, digest, 1).ready()
    fake.store[(ZONE, rank1)].status = "RUNNING"
    service.reconcile(store, launcher)
    assert cloud_gang.read_round(uri, digest)["round"] == 2
    assert str(store.jobs.placements(job_id)["instance"].iloc[-1]) == handle
    assert [n.state for n in launcher.nodes(handle)] == ["running", "running"]
    store.dispose()
