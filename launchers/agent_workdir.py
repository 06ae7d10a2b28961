"""The agent's working directory on an instance (`launchers.agent`'s doc): the names of the
files the job, the agent and the launchers share there, and what the agent reads back of
them."""

from __future__ import annotations

from pathlib import Path

PROGRESS = "progress"  # the job writes its step here ($COSTSCHED_PROGRESS_FILE)
JOB_LOG = "job.log"
CHECKPOINTS = "checkpoints"
CODE = "code"  # the unpacked code archive: where setup and the command run
# Beside the code: setup ran to success on this instance; it holds the seconds it took.
SETUP_DONE = ".setup-done"


def setup_took(done: Path) -> float | None:
    """The seconds an earlier agent's setup on this instance took, as its `SETUP_DONE`
    file keeps them; None where it does not (written before it kept them)."""
    try:
        took = float(done.read_text().strip())
    except (OSError, ValueError):
        return None
    return took if took >= 0 else None


def last_line(path: Path, limit: int = 200) -> str:
    """The last line of the file at `path` ('' when none), of at most `limit` characters:
    a longer one is cut, and ends in '...' to say so."""
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - 4096))
            lines = handle.read().decode(errors="replace").strip().splitlines()
    except OSError:
        return ""
    line = lines[-1].strip() if lines else ""
    return line if len(line) <= limit else line[:limit - 3] + "..."
