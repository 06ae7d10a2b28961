"""A job's shown state is one rule (`shown_state.shown_state`) read by `status`, the
report and the lines that name a stored job's state: a job that exited 0 short of its
declared steps reads 'ended-short' in all three, one that did all its steps or said no
step 'succeeded'. In-memory launcher, SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.report.data import build
from costsched.service import jobs as service
from costsched.shown_state import shown_state
from costsched.store import PriceStore
from tests.costsched.service.test_short_exit import STEPS, ended


@pytest.mark.parametrize(("step", "word"), [(150, "ended-short"), (STEPS, "succeeded"),
                                            (None, "succeeded")])
def test_status_the_report_and_a_refusal_read_one_state(
        store: PriceStore, tmp_path: Path, step: int | None, word: str) -> None:
    launcher, job = ended(store, tmp_path, step)
    [s] = service.status(store, launcher, job)
    [row] = [r for r in build(store).rows["jobs"] if r["job_id"] == job]
    record = store.jobs.get(job)
    assert (s.shown_state, row["state"], shown_state(record)) == (word, word, word)


def test_a_running_job_whose_instance_ended_reads_as_its_instance() -> None:
    from dataclasses import dataclass, field

    @dataclass
    class Stored:  # the fields of a stored job the rule reads
        state: str = "running"
        steps_done: float = 40.0
        steps_total: float | None = 100.0
        spec: dict = field(default_factory=lambda: {"steps": 100})

    assert shown_state(Stored(), "preempted") == "recovering"  # type: ignore[arg-type]
    assert shown_state(Stored(), "running") == "running"  # type: ignore[arg-type]
    assert shown_state(Stored(state="succeeded"), step=40,  # type: ignore[arg-type]
                       reported=True) == "ended-short"
