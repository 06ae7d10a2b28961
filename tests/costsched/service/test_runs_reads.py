"""Reading the runs of no job reads nothing: a pass with no move under way (a launch's
settle and its moves, right after the launch move ended) asks the store nothing for it."""

from __future__ import annotations

import pytest

from costsched.service.jobs.runs import _runs
from costsched.store import PriceStore


def test_the_runs_of_no_job_are_none_without_a_read(store: PriceStore,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def read(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("read the store")

    monkeypatch.setattr(store.jobs, "records", read)
    monkeypatch.setattr(store.moves, "of_jobs", read)
    assert _runs(store, set()) == {}
    assert _runs(store, iter(())) == {}
    assert _runs(store, records=[]) == {}


def test_no_pending_job_no_launch_to_resume_and_no_moves_read(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.service.jobs.steps import _resume_launches
    from launchers import make_launcher

    def read(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("read the moves")

    monkeypatch.setattr(store.moves, "of_jobs", read)
    assert _resume_launches(store, make_launcher("local"), None) == []
