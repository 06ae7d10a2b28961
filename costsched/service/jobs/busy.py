"""A job another costsched acts on now, in the words a user command says it: `start`,
`migrate` and `stop` meet it as a state the job left (StaleState: another writer moved it
first) or as a state of a move under way. One line that names the job and what is being
done to it, raised as TryAgain (exit code 75: the same command may work later), never
the store's own words ("job 5 is 'pending': expected stopped ...")."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from costsched.model import TryAgain
from costsched.service.jobs.state_said import state_said
from costsched.store import PriceStore
from costsched.store.job_rows import JobRecord, StaleState

# What another costsched does to a job in each state a move of it passes through.
DOING = {"pending": "being started", "launching": "being started",
         "recovering": "being recovered", "migrating": "being moved",
         "checkpointing": "being moved"}


def acted_on(record: JobRecord, then: str, doing: str | None = None) -> TryAgain:
    """'job 8 (race) is being recovered by another costsched: THEN' (`doing`: what is done
    to it, else what its state says; a state no move passes through: the state, changed
    by another costsched)."""
    doing = doing or DOING.get(record.state)
    said = (f"is {doing} by another costsched" if doing else
            f"{state_said(record)} now: another costsched changed it meanwhile")
    return TryAgain(f"job {record.id} ({record.name}) {said}: {then}")


@contextmanager
def raced(store: PriceStore, job_id: int, then: str, doing: str | None = None
          ) -> Iterator[None]:
    """The block, with a StaleState it raises (another costsched moved the job first)
    said as `acted_on` says it, of the job as it is now."""
    try:
        yield
    except StaleState:
        raise acted_on(store.jobs.get(job_id), then, doing) from None
