"""A wedged EC2 instance (moto): the cloud says it runs, its agent's heartbeat beside the
checkpoints is stale. Stale for less than `wedged.WEDGED_SECONDS`, the instance's own
supervisor is trusted to start its agent again: the service says the agent is gone and
leaves the instance alone. Stale for longer, the service's dead-agent check terminates it
and relaunches the job from its checkpoint on a new instance, in the same reconcile."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("moto")

from costsched.service import jobs as service  # noqa: E402
from costsched.service.jobs import agents  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers import heartbeats, wedged  # noqa: E402
from launchers.aws import AwsLauncher  # noqa: E402
from tests.launchers import test_aws as base  # noqa: E402
from tests.launchers.test_boot_path import AT, write_job  # noqa: E402

BUCKET = "wedged-bucket"
aws = base.aws  # the fixture


@pytest.fixture(autouse=True)
def _no_instance_left():
    """moto's backends are this process's: the boot tests' server would find this test's
    instances (a launch finds one of the same job and attempt)."""
    yield
    from moto.moto_api._internal.models import moto_api_backend

    moto_api_backend.reset()


def test_a_wedged_instance_is_terminated_and_the_job_relaunched(
        aws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    aws.client("s3").create_bucket(Bucket=BUCKET)
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.9, effective_at=AT, source="test")]))
    [job] = service.launch(store, [write_job(tmp_path)], launcher=launcher,
                           checkpoint_root=f"s3://{BUCKET}/jobs")
    first = launcher.status(str(store.jobs.placements(job.id)["instance"].iloc[-1]))
    assert first.state == "running"
    uri = f"s3://{BUCKET}/jobs/job-{job.id}"

    # stale, but the instance's supervisor may be starting its agent again: left alone
    heartbeats.publish(uri, first.attempt, {"pid": 41, "at": time.time() - 400})
    service.reconcile(store, launcher)
    assert launcher.status(first.id).state == "running"
    assert list(store.jobs.placements(job.id)["instance"]) == [first.id]

    # stale beyond WEDGED_SECONDS: the instance is ended, the job relaunched
    heartbeats.publish(uri, first.attempt,
                       {"pid": 41, "at": time.time() - wedged.WEDGED_SECONDS - 60})
    monkeypatch.setattr(agents, "_read", {})
    done = service.reconcile(store, launcher)
    assert launcher.status(first.id).state == "terminated"
    placed = list(store.jobs.placements(job.id)["instance"])
    assert len(placed) == 2 and placed[0] == first.id, (placed, done)
    second = launcher.status(placed[1])
    assert second.state == "running" and second.attempt != first.attempt
    assert store.jobs.get(job.id).state == "running"
