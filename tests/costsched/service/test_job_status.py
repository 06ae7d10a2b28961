"""What `status` says about a running job: the step the job reported ("no step yet" before
it reports one), why a failed job failed, and never a NaN; on the local launcher with real
subprocesses and a real SQLite store."""

from __future__ import annotations

import json
import math
import sys

import pytest

from costsched.cli import jobs as cli_jobs
from costsched.service import jobs as service
from tests.costsched.service.test_jobs import TRAIN, wait_for, world, write_spec  # noqa: F401
from tests.job_folders import folder_of
from tests.real_jobs import SETTLE, replace_folder_with_a_file


def finished(store, launcher, job_id: int) -> bool:  # noqa: ANN001
    service.reconcile(store, launcher)
    return store.jobs.get(job_id).final


def test_the_step_the_job_reports_is_its_progress(world, capsys) -> None:  # noqa: F811
    store, launcher, tmp = world
    # 2.4 s of steps; it holds after its first, reported, until the test has seen it run
    # (a busy machine may otherwise run it to its end between two looks).
    hold = tmp / "hold"
    hold.touch()
    run = (f"{sys.executable} {TRAIN} --steps 400 --step-seconds 0.006 --checkpoint-every 0.5"
           f" --hold-while {hold}")
    [job] = service.launch(store, write_spec(tmp, "reports", run=run), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp / "checkpoints"))
    # The spec says 1500 steps at 0.01 steps/s: the hours-run estimate is near 0%.
    def reported() -> service.JobStatus | None:
        [s] = service.status(store, launcher, job.id)
        # Seen while it runs: a finished job's progress is 100% whatever it reported.
        running = s.record.state == "running"
        return s if running and s.reported and s.steps_left < 1500 else None

    seen = wait_for(reported, seconds=SETTLE)
    step = 1500 - seen.steps_left
    assert 0 < step <= 400 and seen.progress == pytest.approx(step / 1500)
    hold.unlink()
    wait_for(lambda: finished(store, launcher, job.id), seconds=SETTLE)
    [done] = service.status(store, launcher, job.id)
    assert done.record.state == "succeeded" and done.reported
    assert done.reported_step == 400  # the job's own count, not hours x throughput
    # It succeeded (exit 0) at step 400 of the 1,500 its spec declares: its own share,
    # and the rest left, as its own step says.
    assert done.steps_left == 1100 and done.progress == pytest.approx(400 / 1500)
    assert done.steps_not_reached.startswith("exited 0 at step 400 of 1,500")
    cli_jobs._print_status([done], json_out=True)
    shown = json.loads(capsys.readouterr().out)[0]
    assert shown["progress_source"] == "reported" and shown["failure"] is None


def test_a_job_that_reports_nothing_shows_no_step_and_a_failed_one_says_why(
        world, capsys) -> None:  # noqa: F811
    store, launcher, tmp = world
    run = "echo preparing; echo 'ValueError: bad batch size' >&2; sleep 1; exit 3"
    [job] = service.launch(store, write_spec(tmp, "breaks", run=run), launcher=launcher,
                           wait_seconds=10, checkpoint_root=str(tmp / "checkpoints"))
    [running] = service.status(store, launcher, job.id)
    if not running.record.final:
        assert not running.reported
        # never a guessed share: in setup while its command has not begun
        assert cli_jobs._progress(running) == ("in setup" if running.in_setup
                                               else "no step yet")
        assert running.steps_left == running.record.steps_total
    wait_for(lambda: finished(store, launcher, job.id), seconds=SETTLE)
    [failed] = service.status(store, launcher, job.id)
    assert failed.record.state == "failed"
    assert failed.failure is not None and failed.failure.exit_code == 3
    assert failed.failure.log_tail[-2:] == ["preparing", "ValueError: bad batch size"]
    # Never a guessed percentage for a job that failed before reporting one.
    assert cli_jobs._progress(failed) == "-"
    cli_jobs._print_status([failed], json_out=False)
    text = capsys.readouterr().out
    assert "failed with exit code 3" in text and "| ValueError: bad batch size" in text
    assert "%" not in text.split("breaks", 1)[1].splitlines()[0]
    cli_jobs._print_status([failed], json_out=True)
    shown = json.loads(capsys.readouterr().out)[0]
    assert shown["failure"]["exit_code"] == 3
    assert shown["failure"]["log_tail"][-1] == "ValueError: bad batch size"
    # ... nor in --json (nor the dashboard's API, which serves the same document).
    assert shown["progress"] is None and shown["progress_source"] is None


def test_json_never_carries_nan_or_infinity() -> None:
    doc = {"stay_usd": math.nan, "rows": [1.0, math.inf, {"x": -math.inf}], "ok": 2.5}
    assert cli_jobs._finite(doc) == {"stay_usd": None, "rows": [1.0, None, {"x": None}],
                                     "ok": 2.5}


def test_a_finishing_job_is_not_advised_in_nan_dollars(world) -> None:  # noqa: F811
    """With every step reported done, the job is finishing: nothing to decide, no `$nan`."""
    store, launcher, tmp = world
    [job] = service.launch(store, write_spec(tmp, "ending", run="sleep 30"), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp / "checkpoints"))
    store.jobs.record_step(job.id, 1500.0, at=job.created_at)
    [s] = service.status(store, launcher, job.id)
    assert s.instance_state == "running" and s.reported and s.steps_left == 0
    assert "nan" not in s.next.lower()
    service.stop(store, launcher, job.id)


def test_a_failing_checkpoint_store_shows_in_status_and_the_reconcile_log(
        world, capsys) -> None:  # noqa: F811
    from launchers.checkpoints.local import LocalStore

    store, launcher, tmp = world
    run = f"{sys.executable} {TRAIN} --steps 100000 --step-seconds 0.01 --checkpoint-every 0.2"
    [job] = service.launch(store, write_spec(tmp, "full", run=run), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp / "checkpoints"))
    root = tmp / "checkpoints" / f"{folder_of(store, job.id)}"
    wait_for(lambda: LocalStore(root).list(), seconds=SETTLE)
    replace_folder_with_a_file(root, tmp / "moved-away")
    # Once the folder is a file (a publish caught between the rename and the file may fail
    # otherwise first, and a new error is said anew).
    lines = wait_for(lambda: [x for x in service.reconcile(store, launcher)
                              if "checkpoints not published" in x
                              and "Not a directory" in x], seconds=SETTLE)
    assert lines[0].startswith(f"job {job.id}: checkpoints not published: publishing")
    assert service.reconcile(store, launcher) == []  # said once, not at every pass
    [s] = service.status(store, launcher, job.id)
    assert s.checkpoint_error.startswith("publishing")
    cli_jobs._print_status([s], json_out=False)
    assert "checkpoints not published" in capsys.readouterr().out
    service.stop(store, launcher, job.id)
