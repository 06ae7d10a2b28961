"""A job's state in the word every view shows (`vocabulary.job_state`), from its stored
record and what else the view knows of it: its instance's state (a running job whose
instance has ended), the step it reached and whether it reported one (a job that exited 0
short of its declared steps is 'ended-short'). One rule for `status`, the report, the
dashboard and the lines that name a job's state in a refusal or a list."""

from __future__ import annotations

from typing import TYPE_CHECKING

from costsched.vocabulary import job_state
from costsched.work import ended_short, own_total

if TYPE_CHECKING:  # a job file refused at parsing loads no store
    from costsched.store.job_rows import JobRecord


def record_ended_short(record: JobRecord, step: float | None = None,
                       reported: bool | None = None) -> bool:
    """Whether job `record` exited 0 short of its declared steps (`work.ended_short`):
    stored succeeded, at `step` (its stored step by default) below its total in its own
    steps; `reported`: whether it reported a step (None: only a step above 0 says so)."""
    done = record.steps_done if step is None else step
    return ended_short(record.state == "succeeded", done,
                       own_total(record.spec, record.steps_total), reported)


def shown_state(record: JobRecord, instance_state: str | None = None, *,
                step: float | None = None, reported: bool | None = None) -> str:
    """Job `record`'s state as every view shows it (see the module): `instance_state`,
    its instance's where known; `step` and `reported` as `record_ended_short` takes them."""
    return job_state(record.state, instance_state,
                     record_ended_short(record, step, reported))
