"""`status JOB` and `status --wide` name the instance a job runs on, as `status --json`
names it (`placement.instance`): what `python -m launchers.local preempt` and a cloud's
console take. The list of every job, narrow, leaves it out. The CLI over a fake launcher,
SQLite store."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli import jobs as cli_jobs
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


@pytest.fixture()
def running(cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001, ANN201
    store = PriceStore(str(db_path))
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = FakeLauncher()
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    path = tmp_path / "named.yaml"
    path.write_text(yaml.safe_dump({
        "name": "named", "run": "true", "throughputs": {"V100": 0.5}, "steps": 3600,
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    yield cli, job.id, [i for i in launcher.states][0]
    store.dispose()


def test_status_of_a_job_names_its_instance_as_json_does(running) -> None:  # noqa: ANN001
    cli, job_id, instance = running
    doc = cli("status", str(job_id), "--json")
    assert doc.exit_code == 0, doc.output
    [shown] = json.loads(doc.stdout)["jobs"]
    assert shown["placement"]["instance"] == instance
    said = cli("status", str(job_id))
    assert said.exit_code == 0, said.output
    assert f"  job {job_id}: instance {instance}" in said.stdout.splitlines()


def test_status_wide_has_an_instance_column(running) -> None:  # noqa: ANN001
    cli, job_id, instance = running
    wide = cli("status", "--wide")
    assert wide.exit_code == 0, wide.output
    header = next(line for line in wide.stdout.splitlines() if "instance state" in line)
    cells = [c.strip() for c in header.split("┃")]
    assert cells[cells.index("instance state") + 1] == "instance"
    row = next(line for line in wide.stdout.splitlines() if " named " in line)
    assert [c.strip() for c in row.split("│")][cells.index("instance")] == instance
    # The list of every job, not wide: no column and no line of it.
    narrow = cli("status")
    assert narrow.exit_code == 0, narrow.output
    assert instance not in narrow.stdout
