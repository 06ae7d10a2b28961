"""A job that exits 0 before its declared steps has succeeded (exit 0 is done, by the job
contract), but its progress is its own: step 150 of 1,200 reads 13% with 1,050 steps
left, and `status` (its table, its line, --json) and `report`'s estimate versus actual say
so. In-memory launcher, SQLite store."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli.status_lines import print_status
from costsched.model import InvalidInput
from costsched.report.data import build
from costsched.service import jobs as service
from costsched.service.views import due_words, status_document
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

STEPS = 1200
SAID = ("exited 0 at step 150 of 1,200 (the last step it reported): its declared steps "
        "were not reached")


def ended(store: PriceStore, tmp_path: Path, step: int | None,
          deadline: str | None = None) -> tuple[FakeLauncher, int]:
    """A job of STEPS steps whose instance exited 0 having reported `step` (None: no
    step), closed by a pass."""
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "km.yaml"
    path.write_text(yaml.safe_dump({
        "name": "km", "throughputs": {"V100": 0.5}, "steps": STEPS, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"],
                        **({"deadline": deadline} if deadline else {})},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    start = store.jobs.placements(job.id)["start_at"].iloc[0].to_pydatetime()
    if step:
        store.jobs.record_step(job.id, 1, at=start + timedelta(minutes=6))
    if step:  # (a step 0 is stored by the pass that finds the instance ended)
        store.jobs.record_step(job.id, step, at=start + timedelta(minutes=10))
    [instance] = launcher.states
    launcher.states[instance] = replace(launcher.states[instance], state="succeeded",
                                        exit_code=0, step=step)
    ENDED_EVENTS[job.id] = service.reconcile(store, launcher,
                                             at=start + timedelta(minutes=11))
    assert store.jobs.get(job.id).state == "succeeded"
    return launcher, job.id


ENDED_EVENTS: dict[int, list] = {}  # what the pass that closed each job of `ended` said


@pytest.mark.parametrize(("step", "said"), [
    (150, "job {job}: ended-short: exited 0 at step 150 of 1,200 (the last step it "
          "reported): its declared steps were not reached"),
    (STEPS, "job {job}: succeeded")])
def test_the_pass_that_closes_a_job_says_ended_short_as_every_view_does(
        store: PriceStore, tmp_path: Path, step: int, said: str) -> None:
    """The line the supervisor's log gets (`reconciled`): the shown state, not 'succeeded'
    for a job that exited 0 short of its declared steps."""
    _, job = ended(store, tmp_path, step)
    assert [str(e) for e in ENDED_EVENTS[job]] == [said.format(job=job)]


def test_a_job_that_exits_0_short_of_its_steps_reads_its_own_progress(
        store: PriceStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    launcher, job = ended(store, tmp_path, 150)
    [s] = service.status(store, launcher, job, reconcile_first=False)
    assert s.record.state == "succeeded"
    assert s.progress == pytest.approx(150 / STEPS)  # was: 1.0
    assert s.steps_left == STEPS - 150  # was: 0
    assert s.progress_source == "reported"
    assert s.steps_not_reached == SAID
    [doc] = status_document([s])
    assert (doc["state"], doc["progress"], doc["steps_left"], doc["steps_not_reached"]) == (
        "ended-short", pytest.approx(0.125), STEPS - 150, SAID)  # stored: succeeded
    print_status([s], json_out=False)
    out = capsys.readouterr().out
    assert " 12% " in out or " 13% " in out, out
    assert f"job {job}: {SAID}" in " ".join(out.split()), out


def test_a_job_that_exits_0_at_its_steps_is_done(store: PriceStore, tmp_path: Path) -> None:
    launcher, job = ended(store, tmp_path, STEPS)
    [s] = service.status(store, launcher, job, reconcile_first=False)
    assert (s.progress, s.steps_left, s.steps_not_reached) == (1.0, 0, "")
    [doc] = status_document([s])
    assert doc["steps_not_reached"] is None and doc["steps_not_reported"] is None
    assert doc["reported_step"] == STEPS


def test_reports_estimate_compares_the_steps_it_did_and_says_why(
        store: PriceStore, tmp_path: Path) -> None:
    _, job = ended(store, tmp_path, 150)
    at = datetime.now(timezone.utc) + timedelta(hours=1)
    [row] = build(store, until=at, now=at).rows["estimates"]
    assert row["done"] == pytest.approx(150 / STEPS)  # was: 1.0, a full run
    [plan] = store.jobs.predictions([job]).to_dict("records")
    assert row["expected_training_hours"] == pytest.approx(
        plan["expected_hours"] * 150 / STEPS)
    assert row["vs_estimate"].endswith("(exited 0 at 12% of its declared steps)"), row


def test_a_job_that_reports_step_0_and_exits_0_ended_short(
        store: PriceStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    launcher, job = ended(store, tmp_path, 0)
    [s] = service.status(store, launcher, job, reconcile_first=False)
    said = SAID.replace("step 150", "step 0")
    assert (s.progress, s.steps_left, s.steps_not_reached) == (0.0, STEPS, said)  # was 1.0
    [doc] = status_document([s])
    assert (doc["progress"], doc["steps_left"], doc["steps_not_reached"]) == (
        0.0, STEPS, said)
    print_status([s], json_out=False)
    out = " ".join(capsys.readouterr().out.split())
    assert " 0% " in out and f"job {job}: {said}" in out, out
    at = datetime.now(timezone.utc) + timedelta(hours=1)
    [row] = build(store, until=at, now=at).rows["estimates"]
    assert row["done"] == 0.0 and row["vs_estimate"].startswith("ended short"), row


def test_a_run_that_ended_short_or_failed_did_not_meet_its_deadline() -> None:
    due = datetime(2026, 11, 30, 18, 17, tzinfo=timezone.utc)
    ended_at = due - timedelta(hours=2)
    assert due_words(due, due, True, "succeeded", ended_at) == (
        "was due 2026-11-30 18:17 UTC: met, it finished 2.00 h before")
    assert due_words(due, due, True, "succeeded", ended_at, short=True) == (
        "it ended with 2.00 h left before its deadline (2026-11-30 18:17 UTC), its declared "
        "steps not reached")  # was: met, it finished 2.00 h before
    assert due_words(due, due, True, "failed", ended_at) == (
        # was: nothing said
        "it failed with 2.00 h left before its deadline (2026-11-30 18:17 UTC)")
    assert due_words(due, due, True, "failed", due + timedelta(hours=1)) == (
        "it failed 1.00 h after its deadline (2026-11-30 18:17 UTC)")


def test_a_job_sitting_at_step_0_is_stored_no_reading_each_pass(
        store: PriceStore, tmp_path: Path) -> None:
    """Step 0 from a live instance is no news (a job starting up); from an ended one it is
    stored once, so that the job reads as having reported it."""
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "km.yaml"
    path.write_text(yaml.safe_dump({
        "name": "km", "throughputs": {"V100": 0.5}, "steps": STEPS, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [instance] = launcher.states
    launcher.states[instance] = replace(launcher.states[instance], step=0)
    start = store.jobs.placements(job.id)["start_at"].iloc[0].to_pydatetime()
    for minutes in (1, 2, 3):
        service.reconcile(store, launcher, at=start + timedelta(minutes=minutes))
    assert store.jobs.reading_rows([job.id]) == []
    launcher.states[instance] = replace(launcher.states[instance], state="succeeded",
                                        exit_code=0)
    service.reconcile(store, launcher, at=start + timedelta(minutes=4))
    assert [(r[2], r[4]) for r in store.jobs.reading_rows([job.id])] == [(0, 0)]


def test_status_says_a_job_that_ended_short_did_its_work_by_no_deadline(
        store: PriceStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    launcher, job = ended(store, tmp_path, 0, deadline="2h")
    [s] = service.status(store, launcher, job, reconcile_first=False)
    print_status([s], json_out=False)
    out = " ".join(capsys.readouterr().out.split())
    assert "its declared steps not reached" in out and ": met" not in out, out


def test_start_of_a_job_that_ended_short_continues_it(
        store: PriceStore, tmp_path: Path) -> None:
    """`start` takes up a job that ended short, for the rest of its steps (it once refused
    it: 'ended short: ...'); one that did all of its steps is refused, as succeeded."""
    (tmp_path / "done").mkdir()
    _, done = ended(store, tmp_path / "done", STEPS)
    launcher, job = ended(store, tmp_path, 150)
    assert service.start(store, launcher, job).state in ("launching", "running")
    assert list(store.jobs.placements(job)["reason"]) == ["launch", "start"]
    with pytest.raises(InvalidInput, match="has succeeded: only a stopped or failed job"):
        service.start(store, launcher, done)
