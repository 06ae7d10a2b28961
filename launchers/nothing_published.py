"""The note a running job gets when its command has run a while and nothing was published
from its checkpoint directory: a recovery would start it over from step 0. A job that
writes its checkpoints elsewhere (a task written for SkyPilot, still saving to its old
bucket's path, `/checkpoint/...`, with that bucket not mounted) is told where they must go,
before a preemption loses its work. Said once the command has run a few checkpoint
intervals, or a minute, whichever comes first (`launchers.unseen`, the rule for every file
of the job contract not seen)."""

from __future__ import annotations

from launchers.unseen import overdue, took, wait_seconds

DOC = "docs/checkpoints.md#nothing-published"


def note(began: float | None, published: bool, now: float | None = None,
         wait: float | None = None) -> str:
    """'' while the command has run less than `wait` s (`wait_seconds`) since `began`
    (monotonic seconds; None: it has not started), or once a checkpoint is published or
    restored; else what the status says of it."""
    wait = wait_seconds() if wait is None else wait
    if not overdue(began, published, wait, now):
        return ""
    # (the same words from then on: a status is written again only when they change)
    return (f"nothing published from $CHECKPOINT_DIR in the first {took(wait)} of its "
            "run: a recovery now starts it over from step 0; write its checkpoints under "
            f"$CHECKPOINT_DIR (what it writes anywhere else is not kept; see {DOC})")
