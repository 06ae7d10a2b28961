"""`--secret NAME` for a name a SkyPilot task does not list adds it to the job, as `sky
launch` does and as `--env` adds an env: its name is stored with the job (a recovery takes
its value from the environment), its value never. In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched import launch_secrets
from costsched.service import jobs as service
from costsched.store import PriceStore
from costsched.taskfile import read_jobs
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

TASK = """\
name: adds
resources: {infra: aws/us-east-1, accelerators: V100:1, use_spot: true}
secrets:
  HF_TOKEN:
run: "true"
costsched: {throughputs: {V100: 0.5}, steps: 3600,
            checkpoint: {interval_minutes: 30, size_gb: 1.0}}
"""
VALUES = {"HF_TOKEN": "hf-Zq8cR2vLx9TkEw4m", "WANDB_API_KEY": "wandb-Np7Ys3Ud6Gj1Ab5H"}


def test_a_secret_the_task_does_not_list_is_added_by_name_only(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    path = tmp_path / "sky.yaml"
    path.write_text(TASK)
    read = read_jobs([path], secrets=list(VALUES))
    [job] = service.launch(store, read, launcher=FakeLauncher(),
                           checkpoint_root=str(tmp_path / "ckpt"), secrets=VALUES)
    assert job.state == "running"
    assert job.spec["spec"]["task"]["secrets"] == ["HF_TOKEN", "WANDB_API_KEY"]
    assert launch_secrets.values(job.id, list(VALUES), job.name) == VALUES  # held here
    store.dispose()
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert not any(v.encode() in stored for v in VALUES.values())
