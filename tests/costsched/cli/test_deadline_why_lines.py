"""What `launch`, `status` and `migrate --dry-run` say of a deadline job the deadline policy
keeps off its cheapest spot: why it was placed on on-demand (the launch's decision, kept
for `status` and `status --json`), and, staying there, the cheaper spot its best
alternative leaves out and why, at the figure `migrate --to` gives a move there. The CLI
over a fake launcher, a SQLite store with spot at $0.90/h in us-east-1a (preempted two
minutes ago) and $2.00/h in us-east-1b, on-demand at the catalog's $3.06/h."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli import jobs as cli_jobs
from costsched.model import Offering
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


@pytest.fixture()
def priced(cli, db_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001
    now = datetime.now(timezone.utc)
    store = PriceStore(str(db_path))
    set_prices(store, {"us-east-1a": 0.9, "us-east-1b": 2.0}, now - timedelta(hours=1))
    store.availability.record(Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge",
                                       "spot", "V100", 1, 8, 61.0), "preempted",
                              at=now - timedelta(minutes=2), detail="test")
    launcher = FakeLauncher()
    monkeypatch.setattr(cli_jobs, "make_launcher", lambda name: launcher)
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    yield cli, store
    store.dispose()


def _due(tmp_path: Path) -> Path:
    """Ten minutes of work on a V100, due in 30 minutes."""
    path = tmp_path / "due.yaml"
    path.write_text(yaml.safe_dump({
        "name": "due", "run": "true", "throughputs": {"V100": 1}, "steps": 600,
        "checkpoint": {"interval_minutes": 1, "size_gb": 0.01},
        "constraints": {"regions": ["us-east-1"], "gpu_models": ["V100"],
                        "deadline": "30m"}}))
    return path


def test_launch_status_and_migrate_say_why_spot_is_not_taken(priced, tmp_path: Path) -> None:
    cli, store = priced
    launched = cli("launch", _due(tmp_path), "--wait", "0")
    assert launched.exit_code == 0, launched.output
    [job] = store.jobs.list().itertuples()
    record = store.jobs.get(int(job.id))
    due = record.created_at + timedelta(minutes=30)
    preempted = store.availability.since(event="preempted")["at"].iloc[-1]
    lost = (f"spot there was preempted at {preempted:%H:%M} UTC, and no spot is taken in a "
            "zone for 30 min after a preemption or a capacity error there")
    placed = (
        f"spot-hedge (deadline {due:%Y-%m-%d %H:%M} UTC): placed on aws us-east-1 "
        "p3.2xlarge on-demand: the cheapest spot, aws us-east-1a p3.2xlarge spot at "
        f"$0.9000/h, has none now: {lost}; spot-hedge would wait for spot (it risks no spot "
        "now: 30 min to the deadline is less than its next decision, in 1 h, the work left "
        "(10 min) and a start (15 min)), and a wait could leave it late: at its next "
        "decision, in 1 h, finishing on-demand would need 25 min (the work left and a "
        "restart), and the deadline, 30 min away, comes first")
    assert f"job {record.id} next: spot-hedge (deadline " in launched.output
    # A checkpoint published, its step not known: a move is priced with the assumed lost
    # work (with none, a move would lose all the job did, a figure that grows as it runs).
    _publish(record.checkpoint_location, tmp_path)

    looked = cli("status", str(record.id), "--json")
    assert looked.exit_code == 0, looked.output
    [shown] = json.loads(looked.stdout)["jobs"]
    assert shown["next"] == placed
    assert shown["decision"]["decided_by"] == "costsched launch"

    said = cli("migrate", "--dry-run")
    assert said.exit_code == 0, said.output
    assert said.stdout.splitlines()[:3] == [
        f"job {record.id} (due): staying: spot-hedge (deadline {due:%Y-%m-%d %H:%M} UTC): "
        "stay on aws us-east-1 p3.2xlarge on-demand: $0.5100 to finish here",
        "  $0.8574 on aws us-east-1b p3.2xlarge spot, the best alternative with spot now, "
        "including the move of $0.5167 (egress $0.0000, restart $0.5000, lost work $0.0167, "
        "overlap $0.0000)",
        f"  aws us-east-1a p3.2xlarge spot, $0.3858 including the move, is left out: {lost}"]
    asked = cli("migrate", str(record.id), "--to", "aws us-east-1a p3.2xlarge spot",
                "--dry-run")
    assert "$0.3858 there including the move" in asked.stdout, asked.stdout


def _publish(where: str, tmp_path: Path) -> None:
    from launchers.checkpoints import open_store

    state = tmp_path / "state.bin"
    state.write_bytes(b"weights")
    open_store(where).publish(state)
