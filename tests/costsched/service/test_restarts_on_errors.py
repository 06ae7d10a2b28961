"""A job whose instance exits non-zero is restarted from its newest checkpoint while it has
restarts on errors left (max_restarts_on_errors), by the recovery a preemption takes, said
in one line in its log and `status`, and counted apart from recoveries; with none left it
fails as any job does, saying how many it had. In-memory launcher, SQLite store (and
PostgreSQL where the suite runs on it)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
from costsched.service import views
from costsched.service.jobs.restarts import RESTART_NOTE
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_steps_lost_shown import Logged


def launched(store: PriceStore, tmp_path: Path, restarts: int | None
             ) -> tuple[Logged, int]:
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "flaky", "throughputs": {"V100": 0.5}, "steps": 3600, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0},
            **({} if restarts is None else {"max_restarts_on_errors": restarts})}
    path = tmp_path / "flaky.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = Logged()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return launcher, job.id


def fail(store: PriceStore, launcher: Logged, job: int, step: float = 311,
         saved: float = 300) -> str:
    """Its instance exits 2 at `step`, its checkpoint at `saved`: the instance's id."""
    instance = str(_open_placement(store, job)["instance"])
    store.jobs.record_steps({job: step}, at=datetime.now(timezone.utc))
    launcher.states[instance] = replace(launcher.states[instance], state="failed",
                                        exit_code=2, detail="exit code 2: NCCL timeout",
                                        checkpoint_step=saved)
    return instance


LINE = "exited 2 (NCCL timeout): restarted from step 300, 1 of 2 restarts on errors used"


def test_a_failed_instance_with_restarts_left_is_restarted_from_its_checkpoint(
        store: PriceStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    launcher, job = launched(store, tmp_path, 2)
    first = fail(store, launcher, job)
    events = service.reconcile(store, launcher)
    assert store.jobs.get(job).state == "running"  # was: failed
    assert [e for e in events if e.job_id == job and e.kind == "restart"], events
    placements = store.jobs.placements(job)
    assert len(placements) == 2 and placements["end_at"].iloc[0] is not None
    assert launcher.states[first].state == "terminated"  # never two at once
    assert sum(i.live for i in launcher.states.values()) == 1
    assert store.jobs.get(job).steps_done == 300  # from its checkpoint
    assert [e.detail for e in store.jobs.event_rows([job], [RESTART_NOTE])] == [LINE]
    [s] = service.status(store, launcher, job, reconcile_first=False)
    assert s.recoveries == 0  # not a recovery after a preemption, not a move
    assert not [m for m in s.moves if m.kind == "migration"]
    print_status([s], json_out=False)
    out = " ".join(capsys.readouterr().out.split())
    assert f"job {job}: restarted at " in out and LINE in out, out
    assert "placed at its restart on error on " in out and "at its recovery" not in out, out
    heads = [line for line in service.every_log(store, launcher, job).splitlines()
             if line.startswith("--- instance")]
    assert heads[0].startswith(f"--- instance {first} (launched ") and \
        ", exited 2 (NCCL timeout) " in heads[0], heads
    assert heads[0].endswith(": restarted on the next instance (a restart on error))"), heads
    assert "(restarted here " in heads[1], heads
    [doc] = views.status_document([s])
    assert [r["said"] for r in doc["restarted"]] == [LINE]


def test_with_none_left_it_fails_saying_how_many_it_had(
        store: PriceStore, tmp_path: Path) -> None:
    launcher, job = launched(store, tmp_path, 2)
    for n in (1, 2):
        fail(store, launcher, job)
        service.reconcile(store, launcher)
        assert store.jobs.get(job).state == "running"
        assert len(store.jobs.event_rows([job], [RESTART_NOTE])) == n
    assert store.jobs.event_rows([job], [RESTART_NOTE])[-1].detail.endswith(
        "2 of 2 restarts on errors used")
    fail(store, launcher, job)
    events = service.reconcile(store, launcher)
    record = store.jobs.get(job)
    assert record.state == "failed"
    [said] = [e for e in events if e.job_id == job and e.kind == "failed"]
    assert "failed after 2 restarts on errors" in said
    [s] = service.status(store, launcher, job, reconcile_first=False)
    assert "failed after 2 restarts on errors" in store.jobs.event_rows(
        [job], ["state"])[-1].detail
    assert s.recoveries == 0 and len(store.jobs.placements(job)) == 3


@pytest.mark.parametrize("restarts", [None, 0])
def test_without_restarts_on_errors_a_failure_ends_the_job_as_before(
        store: PriceStore, tmp_path: Path, restarts: int | None) -> None:
    launcher, job = launched(store, tmp_path, restarts)
    fail(store, launcher, job)
    events = service.reconcile(store, launcher)
    assert store.jobs.get(job).state == "failed"
    [said] = [e for e in events if e.job_id == job and e.kind == "failed"]
    assert said == f"job {job}: failed (exit code 2)"
    assert len(store.jobs.placements(job)) == 1
    assert not store.jobs.event_rows([job], [RESTART_NOTE])


def test_a_stop_before_the_restart_wins(store: PriceStore, tmp_path: Path) -> None:
    launcher, job = launched(store, tmp_path, 2)
    fail(store, launcher, job)
    service.stop(store, launcher, job)
    assert store.jobs.get(job).state == "stopped"
    service.reconcile(store, launcher)
    assert store.jobs.get(job).state == "stopped"  # neither restarted nor failed
    assert len(store.jobs.placements(job)) == 1
    assert not store.jobs.event_rows([job], [RESTART_NOTE])


@pytest.mark.parametrize(("restarts", "shown"), [(1, "recovering"), (0, "failing")])
def test_before_the_pass_a_failed_instance_reads_as_the_pass_will_make_it(
        store: PriceStore, tmp_path: Path, restarts: int, shown: str) -> None:
    launcher, job = launched(store, tmp_path, restarts)
    fail(store, launcher, job)
    [s] = service.status(store, launcher, job, reconcile_first=False)
    assert s.shown_state == shown  # was: failing, though the next pass restarts it
