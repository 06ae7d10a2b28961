"""One vocabulary for a user's stop and start: `stop` leaves a job `stopped` (never
`cancelled`), `start` takes it up again as a `start` move (never a recovery: no instance was
lost), and the same words come out of the CLI's table and --json, the report, and the
refusals. In-memory launcher (instances run at once), SQLite store."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli import jobs as cli_jobs
from costsched.model import InvalidInput
from costsched.report import build
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


@pytest.fixture()
def started_again(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, FakeLauncher, int]:
    """A job launched, stopped by its user, and started again."""
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "train", "throughputs": {"V100": 0.5}, "steps": 3600, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    stopped = service.stop(store, launcher, job.id)
    assert stopped.state == "stopped"
    with pytest.raises(InvalidInput, match=r"\(train\) is stopped already$"):
        service.stop(store, launcher, job.id)
    assert service.start(store, launcher, job.id).state == "running"
    return store, launcher, job.id


def test_a_stop_and_start_is_no_recovery(started_again) -> None:
    store, launcher, job = started_again
    log = store.jobs.events(job)
    states = log[log["kind"] == "state"]["to_state"].tolist()
    assert states == ["pending", "launching", "running", "stopped", "pending", "launching",
                      "running"]
    assert [m.kind for m in store.moves.of_job(job)] == ["launch", "start"]
    assert store.jobs.placements(job)["reason"].tolist() == ["launch", "start"]
    # No preemption was seen: the preemption figures learn nothing from a user's stop.
    assert "preempted" not in store.availability.since()["event"].tolist()
    [shown] = service.status(store, launcher, job, reconcile_first=False)
    assert sum(m.kind == "recovery" for m in shown.moves) == 0
    report = build(store)
    assert report.estimates.set_index("job_id").loc[job, "preemptions"] == 0
    assert report.moves["kind"].tolist() == ["start"]


def test_the_cli_says_stopped_and_no_recovery(started_again,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    store, launcher, job = started_again
    service.stop(store, launcher, job)
    shown = service.status(store, launcher, states=["stopped"], reconcile_first=False)
    cli_jobs._print_status(shown, json_out=True)
    [doc] = json.loads(capsys.readouterr().out)
    assert doc["state"] == "stopped"
    assert [m["kind"] for m in doc["moves"]] == ["launch", "start"]
    cli_jobs._print_status(shown, json_out=False)
    table = capsys.readouterr().out
    [row] = [line for line in table.splitlines() if " train " in line]
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[2] == "stopped" and cells[-2:] == ["0", "0"]  # migrations, recoveries
    assert "cancelled" not in table and " start on aws" in table


def test_a_start_refuses_a_job_that_is_not_stopped(started_again) -> None:
    store, launcher, job = started_again
    with pytest.raises(InvalidInput, match=r"\(train\) is running: only a stopped or failed "
                                           "job, or one that ended short of its steps, can "
                                           "be started again; `costsched status"):
        service.start(store, launcher, job)


def test_a_state_of_the_old_words_is_answered_with_the_new(started_again) -> None:
    store, launcher, _ = started_again
    with pytest.raises(InvalidInput, match="a job its user stopped is 'stopped'"):
        service.status(store, launcher, states=["cancelled"], reconcile_first=False)
