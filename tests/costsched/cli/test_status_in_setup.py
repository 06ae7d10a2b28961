"""A job whose instance runs its setup says so, from the instance's own report: `status` reads
'in setup' for its progress and says since when and for how long under the table, `status
--json` gives "setup_since" and "setup_seconds", and the dashboard's pages say it too (its
jobs table's column of the instance's state is headed so, as `status`'s is); none of them
says it once setup has ended and the job's command runs. Setup reports no step, so no speed
is measured over it. A real job on the local launcher, whose setup waits for a file the test
writes."""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from costsched.cli import app
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.real_jobs import TRAIN, a_world, instance_of, wait_for

SETUP_LINE = re.compile(r"^  job (\d+): in setup since (\d\d:\d\d:\d\d) UTC \((\d+) (s|min) so "
                        r"far\), as its instance reports: its command starts once setup "
                        r"ends$", re.M)


def _status(db: str, instances: Path, *args: str) -> str:
    out = CliRunner().invoke(app, ["status", "--db", db, *args],
                             env={"COLUMNS": "220", "COSTSCHED_INSTANCES": str(instances)})
    assert out.exit_code == 0, out.output
    return out.stdout


def _pages(store: PriceStore, *paths: str) -> list[str]:
    """The dashboard's pages, from its app in this process (what `costsched dashboard`
    serves: the instances' folder is the environment's)."""
    pytest.importorskip("starlette", reason="the dashboard extra is not installed")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    client = TestClient(create_app(store))
    answers = [client.get(path) for path in paths]
    assert all(a.status_code == 200 for a in answers), answers
    return [a.text for a in answers]


def test_status_says_a_job_is_in_setup_and_no_more_once_it_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    go = tmp_path / "go"
    with a_world(tmp_path) as (store, launcher, tmp):
        spec = {"name": "slow-setup", "throughputs": {"V100": 0.01}, "steps": 400,
                "setup": f"echo installing; while [ ! -e {go} ]; do sleep 0.05; done",
                "run": f"{sys.executable} {TRAIN} --steps 400 --step-seconds 0.05 "
                       "--checkpoint-every 0.5",
                "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
                "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
        path = tmp / "slow-setup.yaml"
        path.write_text(yaml.safe_dump(spec))
        [job] = service.launch(store, path, launcher=launcher, wait_seconds=20,
                               checkpoint_root=str(tmp / "checkpoints"))
        instance = instance_of(store, job.id)
        db, instances = str(tmp / "store.sqlite"), tmp / "instances"
        began = wait_for(lambda: launcher.status(instance).setup_since)
        assert launcher.status(instance).ran is False  # its command has not begun

        text = _status(db, instances, str(job.id))
        # Its column says what it shows, the instance's state; the job's page names it too.
        assert re.search(r"┃ instance state ┃", text), text
        row = next(line for line in text.splitlines() if "slow-setup" in line)
        assert "in setup" in row and "no step yet" not in row, text
        [(said_job, said_at, _, _)] = SETUP_LINE.findall(text)
        assert int(said_job) == job.id
        assert said_at == f"{began.astimezone(timezone.utc):%H:%M:%S}", text

        [doc] = json.loads(_status(db, instances, str(job.id), "--json"))["jobs"]
        since = datetime.fromisoformat(doc["setup_since"].replace("Z", "+00:00"))
        assert abs((since - began).total_seconds()) < 1e-3, doc["setup_since"]
        assert doc["setup_seconds"] >= 0
        assert doc["state"] == "running" and doc["steps_per_second"] is None
        assert doc["throughput_flag"] is None  # no speed is measured over setup

        monkeypatch.setenv("COSTSCHED_INSTANCES", str(instances))
        page, jobs = _pages(store, f"/jobs/{job.id}", "/")
        assert f"in setup since {said_at} UTC" in page, page[:2000]
        assert f"{instance} (running)" in page
        assert "<th>instance state</th>" in jobs
        assert re.search(r"<td>running</td>\s*<td>(<progress[^>]*></progress> )?in setup</td>",
                         jobs), jobs

        go.touch()  # setup ends; the job's command runs and reports its steps
        wait_for(lambda: launcher.status(instance).step, seconds=120)
        assert launcher.status(instance).setup_since is None
        text = _status(db, instances, str(job.id))
        assert "in setup" not in text, text
        [doc] = json.loads(_status(db, instances, str(job.id), "--json"))["jobs"]
        assert doc["setup_since"] is None and doc["setup_seconds"] is None, doc
        [page] = _pages(store, f"/jobs/{job.id}")
        assert "in setup" not in page
