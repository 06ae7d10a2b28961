"""`stop` on a store another process holds locked: nothing is terminated before the stop is
recorded, so the job keeps running as it was and no later pass "recovers" it; a stop that
was recorded but not finished is finished by stopping again."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from costsched.service import jobs as service
from costsched.store import PriceStore, StoreUnavailable
from costsched.store_limits import Limits
from tests.costsched.service.test_status_batched import NOW, team
from tests.reliability.test_store_faults import HOLD_SQLITE_LOCK


def ended_on_terminate(launcher):  # noqa: ANN001, ANN201 - the test's in-memory launcher
    """The in-memory launcher with terminate ending the instance (its default leaves it
    stopped, and billed)."""
    launcher.terminate = lambda instance_id: launcher._set(instance_id, "terminated")
    return launcher


def test_a_stop_that_cannot_be_recorded_terminates_nothing(tmp_path: Path) -> None:
    made, launcher = team(tmp_path, 1, kinds=("quiet",))
    made.dispose()
    store = PriceStore(made.url, migrate=False, limits=Limits(busy_seconds=0.5))
    launcher = ended_on_terminate(launcher)
    [instance] = launcher.instances()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HOLD_SQLITE_LOCK),
                               str(tmp_path / "jobs.sqlite")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreUnavailable):
            service.stop(store, launcher, instance.job_id, at=NOW)
    finally:
        holder.kill()
        holder.wait()
    assert launcher.status(instance.id).state == "running"
    [shown] = service.status(store, launcher, at=NOW)
    assert shown.record.state == "running"
    assert len(launcher.instances()) == 1  # nothing relaunched

    assert service.stop(store, launcher, instance.job_id, at=NOW).state == "stopped"
    assert launcher.status(instance.id).state == "terminated"
    assert store.jobs.placements(instance.job_id)["end_at"].notna().all()


def test_a_stop_interrupted_after_it_was_recorded_is_finished_by_stopping_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher = team(tmp_path, 1, kinds=("quiet",))
    launcher = ended_on_terminate(launcher)
    [instance] = launcher.instances()

    def lost(*_args: object, **_kwargs: object) -> None:
        raise StoreUnavailable("store gone")

    with monkeypatch.context() as patch:
        patch.setattr(store.jobs, "end_placement", lost)
        with pytest.raises(StoreUnavailable):
            service.stop(store, launcher, instance.job_id, at=NOW)
    assert store.jobs.get(instance.job_id).state == "stopped"
    assert store.jobs.placements(instance.job_id)["end_at"].isna().any()  # still billed

    assert service.stop(store, launcher, instance.job_id, at=NOW).state == "stopped"
    assert store.jobs.placements(instance.job_id)["end_at"].notna().all()
    with pytest.raises(Exception, match="is stopped already"):
        service.stop(store, launcher, instance.job_id, at=NOW)
