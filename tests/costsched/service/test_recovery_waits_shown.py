"""A recovery that waits for a secret (this process has no value for it) is not said to
have happened: `status` says the job was preempted and will resume from its checkpoint's
step once its recovery starts; once it starts, its line says it was recovered at the time
it did, not when the preemption was seen. In-memory launcher, SQLite store."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
from costsched.service import views
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.service.test_start_secrets import VALUE, launch_two

WORDS = ("resume from step 100 (its checkpoint's): at least 67 steps lost (since its last "
         "reading at step 167)")


def _lines(store: PriceStore, launcher: object, job: int,
           capsys: pytest.CaptureFixture[str]) -> tuple[list[str], int]:
    [s] = service.status(store, launcher, job, reconcile_first=False)  # type: ignore[arg-type]
    print_status([s], json_out=False)
    out = capsys.readouterr().out
    return [line.strip().removeprefix(f"job {job}: ") for line in out.splitlines()
            if line.strip().startswith(f"job {job}: ")], s.recoveries


def test_a_recovery_waiting_for_a_secret_is_said_as_to_come_then_as_it_began(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    launcher, sec, _ = launch_two(store, tmp_path, monkeypatch)
    instance = str(_open_placement(store, sec)["instance"])
    seen = datetime.now(timezone.utc) + timedelta(minutes=1)
    store.jobs.record_steps({sec: 167.0}, at=seen - timedelta(seconds=30))
    launcher.states[instance] = replace(launcher.states[instance], state="preempted",
                                        checkpoint_step=100)
    service.reconcile(store, launcher, at=seen)
    assert store.jobs.get(sec).state == "recovering"

    lines, recoveries = _lines(store, launcher, sec, capsys)
    assert recoveries == 0
    [s] = service.status(store, launcher, sec, reconcile_first=False)
    [doc] = views.status_document([s])
    assert [(r["waiting"], r["began_at"]) for r in doc["recovered"]] == [(True, None)]
    assert not [x for x in lines if x.startswith("recovered at ")], lines
    [waiting] = [x for x in lines if x.startswith(f"instance {instance} was preempted at ")]
    assert waiting.startswith(f"instance {instance} was preempted at {seen:%Y-%m-%d %H:%M} "
                              f"UTC; the job will {WORDS}, once its recovery starts: it waits for "
                              "secret KM_TOKEN"), waiting

    monkeypatch.setenv("KM_TOKEN", VALUE)  # a process that holds it carries the recovery on
    began = seen + timedelta(minutes=20)
    service.reconcile(store, launcher, at=began)
    assert store.jobs.get(sec).state == "running"
    lines, recoveries = _lines(store, launcher, sec, capsys)
    assert recoveries == 1
    [s] = service.status(store, launcher, sec, reconcile_first=False)
    [doc] = views.status_document([s])
    assert [(r["waiting"], r["began_at"]) for r in doc["recovered"]] == [
        (False, began.replace(microsecond=0).isoformat())]
    assert not [x for x in lines if " was preempted at " in x], lines
    [done] = [x for x in lines if x.startswith("recovered at ")]
    assert done == (f"recovered at {began:%Y-%m-%d %H:%M} UTC: instance {instance} was "
                    f"preempted; the job {WORDS.replace('resume', 'resumes', 1)}"), done
