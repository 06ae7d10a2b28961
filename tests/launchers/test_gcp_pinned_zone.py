"""A job that keeps to one zone (`zone: us-central1-b`, or `infra: gcp/us-central1/
us-central1-b` as `plan --emit sky` writes it) on an offering priced for its whole region
is started in that zone, and recovered there, not in the first zone known to offer it: the
exact insert requests on the Compute Engine fakes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

compute_v1 = pytest.importorskip("google.cloud.compute_v1")

import pandas as pd  # noqa: E402

from costsched.model import Offering  # noqa: E402
from costsched.service import jobs as service  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers.base import LaunchSpec  # noqa: E402
from launchers.gcp import GcpLauncher  # noqa: E402
from tests.launchers.test_gcp import FakeInstances  # noqa: E402
from tests.launchers.test_gcp_gang import FakePolicies, GangInstances  # noqa: E402

V100 = "n1-standard-8+1xnvidia-tesla-v100"
KNOWN = ["us-central1-a", "us-central1-c", "us-central1-b"]  # the store's zone coverage


def regional(zones: tuple[str, ...] = (), nodes: int = 1, checkpoints: str = "gs://b/ckpt"
             ) -> LaunchSpec:
    return LaunchSpec(job_id=7, job_name="pinned", command="python train.py",
                      offering=Offering("gcp", "us-central1", "", V100, "spot", "V100", 1),
                      checkpoint_uri=checkpoints, attempt="launch-1",
                      task={"num_nodes": nodes} if nodes > 1 else {}, zones=zones)


def test_a_regional_offering_is_inserted_in_the_zone_the_job_keeps_to() -> None:
    fake = FakeInstances()
    launcher = GcpLauncher(project="proj", instances_client=fake, zones=lambda _: KNOWN)
    got = launcher.launch(regional(("europe-west4-a", "us-central1-b")))
    [request] = fake.inserted
    assert request.zone == "us-central1-b" and got.id.startswith("us-central1-b/")
    assert request.instance_resource.machine_type == \
        "zones/us-central1-b/machineTypes/n1-standard-8"
    # A job that keeps to no zone of the region: the first zone known to offer it.
    launcher.launch(dataclasses.replace(regional(), attempt="launch-2"))
    assert fake.inserted[1].zone == "us-central1-a"
    # Several zones of the region: the first of them known to offer it.
    launcher.launch(dataclasses.replace(regional(("us-central1-f", "us-central1-c")),
                                        attempt="launch-3"))
    assert fake.inserted[2].zone == "us-central1-c"


def test_a_gangs_nodes_are_inserted_in_the_zone_the_job_keeps_to(tmp_path: Path) -> None:
    fake = GangInstances()
    launcher = GcpLauncher(project="proj", instances_client=fake, zones=lambda _: KNOWN,
                           policies_client=FakePolicies(), gang_placement="off")
    launcher.launch(regional(("us-central1-b",), nodes=2, checkpoints=str(tmp_path / "ckpt")))
    assert [r.zone for r in fake.inserted] == ["us-central1-b", "us-central1-b"]


TASK = """\
name: pinned
resources:
  infra: gcp/us-central1/us-central1-b
  accelerators: V100:1
  use_spot: true
run: python train.py
"""


def test_through_the_service_a_pinned_job_is_launched_and_recovered_in_its_zone(
        tmp_path: Path) -> None:
    fake = FakeInstances()
    launcher = GcpLauncher(project="proj", instances_client=fake, zones=lambda _: KNOWN)
    at = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(  # priced for the whole region, as GCP's prices are
        cloud="gcp", region="us-central1", zone="", instance_type=V100, market="spot",
        os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=30.0,
        usd_per_hour=0.9, effective_at=at, source="test")]))
    path = tmp_path / "task.yaml"
    path.write_text(TASK)
    [job] = service.launch(store, [path], launcher=launcher, at=at,
                           checkpoint_root=str(tmp_path / "ckpts"))
    [first] = fake.inserted
    assert first.zone == "us-central1-b"
    for made in fake.store.values():
        made.status = "RUNNING"
    service.reconcile(store, launcher)
    del fake.store[("us-central1-b", first.instance_resource.name)]  # preempted: deleted
    done = service.reconcile(store, launcher)
    assert any("preempted; recovery" in line for line in done), done
    [_, again] = fake.inserted
    assert again.zone == "us-central1-b"
    assert again.instance_resource.name != first.instance_resource.name
    assert str(store.jobs.placements(job.id)["instance"].iloc[-1]).startswith("us-central1-b/")
    store.dispose()
