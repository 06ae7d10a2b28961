"""Restarts on errors: a job whose instance exits non-zero while it has restarts left (its
file's max_restarts_on_errors, SkyPilot's job_recovery field) is restarted from its newest
checkpoint by the recovery a preemption takes (`watch._restart_on_error`). Each is kept in
the job's log as one line (RESTART_NOTE, the count of restarts used) and counted apart:
not a recovery after a preemption, not a move."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from costsched.service.jobs.resumed_words import READ_OFF_TIME
from costsched.vocabulary import counted, restart_move

if TYPE_CHECKING:  # (a view reads its words without opening a store: no SQLAlchemy)
    from costsched.store import PriceStore
    from costsched.store.moves import MoveRecord

# The job log's kind of a restart on error: 'exited 2 (...): restarted from step 300, 1 of
# 3 restarts on errors used'. How many a job has is how many it used.
RESTART_NOTE = "restart_on_error"


def allowed(stored: Mapping) -> int:
    """The restarts on errors a job's stored spec allows (0: none, a failure ends it)."""
    spec = stored.get("spec") if isinstance(stored, Mapping) else None
    value = (spec or {}).get("max_restarts_on_errors", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else 0


def used(store: PriceStore, job_id: int) -> int:
    """The restarts on errors the job has had (its RESTART_NOTE events)."""
    return len(store.jobs.event_rows([job_id], [RESTART_NOTE]))


def is_restart(move: MoveRecord) -> bool:
    """Whether a recovery move restarts a job after its own error (not a preemption)."""
    return restart_move(move.kind, move.detail)


def exited(exit_code: int | None, detail: str) -> str:
    """How the instance ended, in words: 'exited 2 (NCCL error ...)', 'exited 1'."""
    detail = str(detail or "").strip()
    if exit_code is None:
        return f"failed ({detail})" if detail else "failed"
    detail = detail.removeprefix(f"exit code {exit_code}").strip(" :;,")
    if detail.startswith("(") and detail.endswith(")"):  # 'exit code 1 (its last line)'
        detail = detail[1:-1].strip()
    return f"exited {exit_code}" + (f" ({detail})" if detail else "")


def restarted(how: str, step: float, number: int, of: int, inferred: bool = False) -> str:
    """The line a restart keeps in the job's log and `status` shows (`inferred`: its
    checkpoint's step read off the time it was saved, `resumed_words`' 'about')."""
    where = (f"about step {step:,.0f} (its checkpoint's, {READ_OFF_TIME})" if inferred and step
             else f"step {step:,.0f}")
    return f"{how}: restarted from {where}, {number} of {counted(of, 'restart')} on errors used"


def exhausted(of: int) -> str:
    """What a job that failed with no restart on errors left adds to its failure ('' when
    its spec allowed none: it fails as any job does)."""
    return f"; failed after {counted(of, 'restart')} on errors" if of else ""
