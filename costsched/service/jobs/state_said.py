"""A stored job's state in the word every view shows (`vocabulary.job_state`), for the
lines that name it outside a status: refusals ('job 3 (x) is ended-short (...): nothing
to stop'), lists of a name's other jobs, the job's instance stories."""

from __future__ import annotations

from typing import TYPE_CHECKING

from costsched.model import state_phrase
from costsched.shown_state import record_ended_short
from costsched.vocabulary import ENDED_SHORT
from costsched.work import own_total

if TYPE_CHECKING:  # a job file refused at parsing loads no store (status_lines imports this)
    from costsched.store.jobs import JobRecord

# The stored states `costsched start` takes up (and one that ended short of its steps).
STARTABLE = ("stopped", "failed")


def state_said(record: JobRecord) -> str:
    """A stored job's state in a sentence, in its shown word (`shown_state.shown_state`): 'has
    succeeded', 'is stopped', 'is ended-short (exited 0 at step 1,000 of its 3,000
    declared)'."""
    total = own_total(record.spec, record.steps_total)
    if record_ended_short(record) and total:
        return (f"is {ENDED_SHORT} (exited 0 at step {record.steps_done:,.0f} of its "
                f"{total:,.0f} declared)")
    return state_phrase(record.state)
