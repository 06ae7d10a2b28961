"""When a local instance was lost: `preempt` and `notice` write the time they took it away
(WORKDIR/preempted, an ISO time); an agent killed by anything else was last alive at its
heartbeat. Its placement is charged until then, not until costsched saw it gone."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from launchers.cloud_times import utc
from launchers.heartbeats import read_local
from launchers.progress_readings import read_progress

PREEMPTED = "preempted"  # WORKDIR/preempted: when a simulated cloud took the instance away
PROGRESS = "progress"  # the job's step, written by the job (`launchers.agent_workdir.PROGRESS`)


def mark_taken(folder: Path) -> None:
    """The instance in `folder` is taken away now."""
    (folder / PREEMPTED).write_text(datetime.now(timezone.utc).isoformat())


def lost_at(folder: Path) -> datetime | None:
    """When the preempted instance in `folder` was lost: the time `mark_taken` wrote, else
    its agent's last heartbeat; None when neither reads."""
    try:
        taken = utc((folder / PREEMPTED).read_text().strip())
    except OSError:
        taken = None
    if taken is not None:
        return taken
    beat = read_local(folder).get("at")
    return datetime.fromtimestamp(beat, timezone.utc) if beat is not None else None


def last_step(folder: Path, step: object, step_at: datetime | None,
              state: str) -> tuple[int | None, datetime | None]:
    """The step of a local instance and when the job wrote it: the agent's (`step`, read
    at its last poll), or, once the instance was taken away, a later one from the progress
    file the job left behind (what a cloud's lost instance cannot give)."""
    step = step if isinstance(step, int) and step >= 0 else None
    if state != "preempted":
        return step, step_at
    path = folder / PROGRESS
    left = read_progress(path)
    try:
        written = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    except OSError:
        return step, step_at
    if left is None or (step is not None and left <= step):
        return step, step_at
    return left, written
