"""Every line that names a job's state outside a status uses the word status shows
(`state_said.state_said`, one place): a job that exited 0 short of its declared steps is
stored succeeded but shown `ended-short`, and `stop`, `migrate` and the lists of a name's
other jobs say so, never "has succeeded". In-memory launcher, SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.service.test_short_exit import STEPS, ended


def test_stop_of_a_job_that_ended_short_says_ended_short_and_how_to_do_the_rest(
        store: PriceStore, tmp_path: Path) -> None:
    launcher, job = ended(store, tmp_path, 150)
    with pytest.raises(InvalidInput) as refused:
        service.stop(store, launcher, job)
    assert str(refused.value) == (  # was: 'has succeeded: nothing to stop'
        f"job {job} (km) is ended-short (exited 0 at step 150 of its 1,200 declared): "
        f"nothing to stop; `costsched start {job}` does the rest")
    assert store.jobs.get(job).state == "succeeded"  # left as it was


def test_stop_of_a_job_that_did_all_its_steps_still_says_succeeded(
        store: PriceStore, tmp_path: Path) -> None:
    launcher, job = ended(store, tmp_path, STEPS)
    with pytest.raises(InvalidInput, match=r"\(km\) has succeeded: nothing to stop$"):
        service.stop(store, launcher, job)


def test_migrate_of_a_job_that_ended_short_says_ended_short(
        store: PriceStore, tmp_path: Path) -> None:
    launcher, job = ended(store, tmp_path, 150)
    with pytest.raises(InvalidInput) as refused:
        service.migrate(store, launcher, job, dry_run=True)
    assert "is ended-short (exited 0 at step 150" in str(refused.value), refused.value
    assert "succeeded" not in str(refused.value)


def test_the_other_jobs_of_a_name_are_listed_in_their_shown_state(
        store: PriceStore, tmp_path: Path) -> None:
    _, short = ended(store, tmp_path, 150)
    _, done = ended(store, tmp_path, STEPS)
    said = service.namesakes(store, "km")
    assert f"job {short} (ended-short)" in said, said  # was: (succeeded)
