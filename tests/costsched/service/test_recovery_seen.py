"""A job being recovered, as a look from another process sees it meanwhile (`status`
without a reconcile, its --json, the dashboard's document): `recovering`, never `running`
with no placement. A recovery whose process dies before its move is made is recovered by
the next pass. In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from costsched.service import jobs as service
from costsched.service import views
from costsched.service.jobs import decider
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_start_secrets import _spec


def _seen(store: PriceStore, job: int) -> tuple[str, bool, str, int]:
    """What a look from elsewhere shows of the job now: its state, whether it shows a
    placement, and its state and recoveries in `status --json`."""
    [shown] = service.status(store, None, job, reconcile_first=False)
    [doc] = views.status_document([shown])
    return (shown.record.state, shown.open_placement is not None, doc["state"],
            shown.recoveries)


@pytest.fixture()
def running(store: PriceStore, tmp_path: Path) -> tuple[FakeLauncher, int]:
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = FakeLauncher()
    [job] = service.launch(store, _spec(tmp_path, "race", []), launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return launcher, job.id


def test_a_job_reads_recovering_to_others_while_it_is_recovered(
        store: PriceStore, running: tuple[FakeLauncher, int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, job = running
    seen: list[tuple[str, bool, str, int]] = []
    choose, launch = decider.place, launcher.launch

    def placing(*args: Any, **kwargs: Any) -> Any:  # the policy chooses (seconds, at times)
        seen.append(_seen(store, job))
        return choose(*args, **kwargs)

    def launching(spec: Any) -> Any:  # the new instance is asked for
        seen.append(_seen(store, job))
        return launch(spec)

    monkeypatch.setattr(decider, "place", placing)
    monkeypatch.setattr(launcher, "launch", launching)
    launcher.set(str(_open_placement(store, job)["instance"]), "preempted")
    service.reconcile(store, launcher)

    # Counted once under way (its checkpoint verified, its instance asked for), not before.
    assert seen == [("recovering", False, "recovering", 0),
                    ("recovering", False, "recovering", 1)]
    assert _seen(store, job) == ("running", True, "running", 1)


def test_a_recovery_whose_process_died_before_its_move_is_recovered_by_the_next_pass(
        store: PriceStore, running: tuple[FakeLauncher, int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, job = running
    choose = decider.place

    def dies(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt  # the process ends here: no move was made

    monkeypatch.setattr(decider, "place", dies)
    launcher.set(str(_open_placement(store, job)["instance"]), "preempted")
    with pytest.raises(KeyboardInterrupt):
        service.reconcile(store, launcher)
    assert _seen(store, job) == ("recovering", False, "recovering", 0)

    monkeypatch.setattr(decider, "place", choose)
    service.reconcile(store, launcher)
    assert _seen(store, job) == ("running", True, "running", 1)
    assert [m.kind for m in store.moves.of_job(job)] == ["launch", "recovery"]
