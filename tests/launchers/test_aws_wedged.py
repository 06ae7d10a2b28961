"""A wedged EC2 instance (moto): the cloud says it runs, its agent's heartbeat beside the
checkpoints is stale. Stale for less than `wedged.WEDGED_SECONDS`, the instance's own
supervisor is trusted to start its agent again: `status` says the agent is silent and
leaves the instance alone. Stale for longer, the dead-agent check `status` runs first
terminates it and relaunches the job from its checkpoint on a new instance."""

from __future__ import annotations

import re
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
from tests.job_folders import folder_of
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


def test_through_the_cli_a_dead_agent_is_said_then_its_job_relaunched(
        aws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As a user sees it: `costsched status` says the agent of the EC2 instance is silent
    while the instance's own supervisor may still start it; once its heartbeat is older than
    the wedged limit, the same command ends the instance and relaunches the job."""
    from typer.testing import CliRunner

    from costsched.cli import app
    from costsched.cli import jobs as cli_jobs

    aws.client("s3").create_bucket(Bucket=BUCKET)
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    db = tmp_path / "store.sqlite"
    store = PriceStore(f"sqlite:///{db}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.9, effective_at=AT, source="test")]))
    [job] = service.launch(store, [write_job(tmp_path)], launcher=launcher,
                           checkpoint_root=f"s3://{BUCKET}/jobs")
    first = launcher.status(str(store.jobs.placements(job.id)["instance"].iloc[-1]))
    uri = f"s3://{BUCKET}/jobs/{folder_of(store, job.id)}"
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)

    def status() -> str:
        monkeypatch.setattr(agents, "_read", {})  # the heartbeat as written just now
        result = CliRunner().invoke(app, ["status", str(job.id), "--db", str(db)],
                                    terminal_width=200)
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    heartbeats.publish(uri, first.attempt, {"pid": 41, "at": time.time() - 400})
    said = status()
    assert re.search(r"job 1: checkpoints not published: the agent has not written its "
                     r"heartbeat for \d+ min", said), said
    assert launcher.status(first.id).state == "running"
    assert list(store.jobs.placements(job.id)["instance"]) == [first.id]

    heartbeats.publish(uri, first.attempt,
                       {"pid": 41, "at": time.time() - wedged.WEDGED_SECONDS - 60})
    said = status()
    assert launcher.status(first.id).state == "terminated"
    placed = list(store.jobs.placements(job.id)["instance"])
    assert len(placed) == 2 and placed[0] == first.id, (placed, said)
    second = launcher.status(placed[1])
    assert second.state == "running" and second.attempt != first.attempt
    assert store.jobs.get(job.id).state == "running"
