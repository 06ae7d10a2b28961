"""What status says of the scheduled optimizer while a supervisor watches: its re-plan's next
run, which the store's schedule does not hold."""

from __future__ import annotations

from datetime import datetime, timezone

from rich.console import Console

from costsched.cli import status_lines
from costsched.daemon.records import TaskStatus
from costsched.daemon.supervision import Recovery, Watching
from costsched.store.leases import TaskRun

AT = datetime(2026, 11, 29, 13, 5, tzinfo=timezone.utc)


def _watching(kind: str) -> Watching:
    return Watching(4321, "here", True, kind, 30.0, "", AT, None, "", "")


def _tasks() -> list[TaskStatus]:
    ran = TaskRun(id=1, task="replan", holder="here:4321:x", started_at=AT.replace(minute=0),
                  finished_at=AT.replace(minute=0), status="ok",
                  detail="1 running job, 0 migrations started")
    return [TaskStatus("collect", None, None, []), TaskStatus("replan", None, ran, [])]


def test_the_supervisors_next_replan_is_the_tasks_next_run(monkeypatch) -> None:  # noqa: ANN001
    supervised = Recovery([_watching("auto")], 1, True, replan="30 * * * *")
    collect, replan = supervised.scheduled(_tasks(), AT)
    assert replan.next_run == AT.replace(minute=30) and collect.next_run is None
    # A daemon of another kind keeps its schedule in the store: nothing is filled in.
    served = Recovery([_watching("service")], 1, True, replan="30 * * * *")
    assert [t.next_run for t in served.scheduled(_tasks(), AT)] == [None, None]

    console = Console(width=160, record=True)
    monkeypatch.setattr(status_lines, "console", console)
    status_lines.print_daemon(supervised.scheduled(_tasks(), AT))
    [row] = [line for line in console.export_text().splitlines() if "replan" in line]
    assert "2026-11-29 13:30:00" in row and "2026-11-29 13:00:00" in row
