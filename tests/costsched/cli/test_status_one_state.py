"""One state per job: a running job whose instance has ended reads, until the next pass
records it, what that pass makes of it, beside its instance's state, alike in `status`'s
table, `status --json` and the dashboard's API: 'finishing' beside 'succeeded',
'failing' beside 'failed', 'recovering' beside 'preempted'; never 'running'. Real jobs of
the local launcher, looked at without a pass acting on them (as a `status` that did not
get the job's lease, or the dashboard between the watcher's passes)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.service import jobs as service
from costsched.store import PriceStore
from costsched.vocabulary import AS_INSTANCE_ENDED, SHOWN_ONLY, job_state
from launchers.local import LocalLauncher

pytest.importorskip("starlette", reason="the dashboard extra is not installed")


def _job(tmp_path: Path, name: str, run: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"name: {name}\nrun: '{run}'\nsteps: 100\nthroughputs: {{V100: 1}}\n"
                    "constraints:\n  regions: [us-east-1]\n")
    return path


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.2)
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(launcher.base_dir))
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=1.25, effective_at=datetime.now(timezone.utc) - timedelta(hours=1),
        source="test")]))
    yield store, launcher, db, tmp_path
    for instance in launcher.instances():
        launcher.terminate(instance.id)
    store.dispose()


def _launched(store: PriceStore, launcher: LocalLauncher, tmp_path: Path, name: str,
              run: str) -> tuple[int, str]:
    [job] = service.launch(store, _job(tmp_path, name, run), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp_path / "ckpt"))
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    return job.id, instance


def _until(launcher: LocalLauncher, instance: str, state: str) -> None:
    for _ in range(600):
        if launcher.status(instance).state == state:
            return
        time.sleep(0.05)
    raise AssertionError(f"instance {instance}: {launcher.status(instance).state}")


def _shown(db: str, store: PriceStore, job: int) -> tuple[list[str], dict, dict]:
    """The job's row of `status`'s table (state, instance), its --json and its document
    in the dashboard's API, none of them acting on it."""
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    shown = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile"],
                               env={"COLUMNS": "250"})
    assert shown.exit_code == 0, shown.output
    [row] = [line for line in shown.stdout.splitlines()
             if line.strip(" │").startswith(f"{job} ")]
    cells = [c.strip() for c in row.strip(" │").split("│")]
    listed = CliRunner().invoke(app, ["status", str(job), "--db", db, "--no-reconcile",
                                      "--json"])
    assert listed.exit_code == 0, listed.output
    [doc] = json.loads(listed.stdout)["jobs"]
    client = TestClient(create_app(store))
    [api] = [j for j in client.get("/api/jobs").json()["jobs"] if j["id"] == job]
    page = client.get(f"/jobs/{job}").text
    assert f'state-{api["state"]}">{api["state"]}</span>' in page  # its page's heading
    return [cells[2], cells[4]], doc, api


@pytest.mark.parametrize(("code", "instance_state", "shown"), [
    (0, "succeeded", "finishing"), (3, "failed", "failing")])
def test_a_job_whose_command_exited_reads_what_the_next_pass_makes_of_it(
        world, code: int, instance_state: str, shown: str) -> None:
    store, launcher, db, tmp = world
    go = tmp / "go"  # the command ends once the launch has returned, however slow it is
    job, instance = _launched(store, launcher, tmp, "ends",
                              f"until [ -e {go} ]; do sleep 0.05; done; exit {code}")
    go.touch()
    _until(launcher, instance, instance_state)
    assert store.jobs.get(job).state == "running", store.jobs.events(job)  # no pass acted
    table, doc, api = _shown(db, store, job)
    assert table == [shown, instance_state]
    assert (doc["state"], doc["instance_state"]) == (shown, instance_state)
    assert (api["state"], api["instance_state"]) == (shown, instance_state)
    service.reconcile(store, launcher)  # the next pass: the state it said
    table, doc, _ = _shown(db, store, job)
    assert table[0] == doc["state"] == instance_state


def test_a_preempted_job_reads_recovering_before_its_recovery_begins(world) -> None:
    store, launcher, db, tmp = world
    job, instance = _launched(store, launcher, tmp, "lost", "sleep 60")
    launcher.preempt(instance)
    _until(launcher, instance, "preempted")
    assert store.jobs.get(job).state == "running"
    table, doc, api = _shown(db, store, job)
    assert table == ["recovering", "preempted"]
    assert (doc["state"], doc["instance_state"]) == ("recovering", "preempted")
    assert (api["state"], api["instance_state"]) == ("recovering", "preempted")


def test_the_shown_states_are_documented_and_only_a_running_jobs() -> None:
    lifecycle = (Path(__file__).resolve().parents[3] / "docs" / "job-lifecycle.md").read_text()
    for word in {*SHOWN_ONLY, *AS_INSTANCE_ENDED.values()}:
        assert f"`{word}`" in lifecycle, word
    assert job_state("running", "running") == "running"
    assert job_state("running", "") == "running" and job_state("running", None) == "running"
    assert job_state("migrating", "succeeded") == "migrating"  # a move's own states
    assert job_state("succeeded", "succeeded") == "succeeded"
