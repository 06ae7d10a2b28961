"""A job waiting for its recovery (its instance preempted) reads the progress of the step
its recovery resumes from (its checkpoint's), not the step it last reported: the work
after its checkpoint is done again. In-memory launcher, SQLite store."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from costsched.cli.status_lines import progress
from costsched.service import jobs as service
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.service.test_budget_warning_ahead import _launched


def test_a_preempted_job_reads_the_progress_of_its_checkpoint(store: PriceStore,
                                                              tmp_path: Path) -> None:
    job_id, launcher = _launched(store, tmp_path, 100.0)  # 2,000 steps
    store.jobs.record_steps({job_id: 200.0}, at=datetime.now(timezone.utc))
    [s] = service.status(store, launcher, job_id, reconcile_first=False)
    assert (s.shown_state, progress(s)) == ("running", "10%")
    instance = str(_open_placement(store, job_id)["instance"])
    launcher.states[instance] = replace(launcher.states[instance], state="preempted",
                                        checkpoint_step=80)
    [s] = service.status(store, launcher, job_id, reconcile_first=False)
    assert (s.shown_state, progress(s)) == ("recovering", "4%")
    assert s.shown_reported_step == 200  # the step it reported stays said as such
