"""`status --wait` looks at the jobs every POLL_SECONDS, sleeping in between, and shows what
it waits for."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from costsched import daemon
from costsched.cli import app
from costsched.cli import jobs as cli_jobs
from costsched.store import PriceStore


def test_status_wait_sleeps_between_looks(monkeypatch: pytest.MonkeyPatch,
                                          store: PriceStore, db_path: Path) -> None:
    monkeypatch.setenv("COSTSCHED_DB", str(db_path))  # an empty store; the looks are faked
    clock = {"now": 0.0}
    sleeps: list[float] = []
    looks: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock["now"] += seconds

    def status(store, launcher, job, **filters):  # noqa: ANN001, ANN003, ANN202
        looks.append(clock["now"])
        final = clock["now"] >= 9.0  # the job ends after 9 s
        record = SimpleNamespace(id=1, final=final, name="train", state="done" if final else
                                 "running")
        return [SimpleNamespace(record=record, progress=min(1.0, clock["now"] / 9),
                                progress_source="reported", reported=True, step=0.0)]

    shown: list[str] = []
    monkeypatch.setattr(cli_jobs.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(cli_jobs.time, "sleep", sleep)
    monkeypatch.setattr(cli_jobs.service, "status", status)
    monkeypatch.setattr(cli_jobs, "open_store", lambda db: None)
    monkeypatch.setattr(cli_jobs, "_job_launcher", lambda store, job: None)
    monkeypatch.setattr(daemon, "status", lambda store: [])
    monkeypatch.setattr("costsched.daemon.supervision.recovery", lambda *_, **__: None)
    monkeypatch.setattr(cli_jobs, "print_budgets", lambda store, **_: None)
    monkeypatch.setattr("costsched.service.booking.held_unused", lambda *_: [])
    monkeypatch.setattr(cli_jobs, "_print_status", lambda shown_, json_out, scheduled=None, **_:
                        shown.append(shown_[0].record.state))
    lines: list[str] = []
    real_waiting_line = cli_jobs._waiting_line
    monkeypatch.setattr(cli_jobs, "_waiting_line",
                        lambda s, left: lines.append(real_waiting_line(s, left)) or lines[-1])

    result = CliRunner().invoke(app, ["status", "--wait", "60"])
    assert result.exit_code == 0, result.output
    assert sleeps and all(s == cli_jobs.POLL_SECONDS for s in sleeps)
    assert looks == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]  # one look per poll, not a busy loop
    assert shown == ["done"]
    assert lines[0] == "waiting (60 s left): train running 0%"
    assert lines[-1].startswith("waiting (52 s left): train running 89%")
