"""One job that cannot be looked after does not hide the others: `status` (its reconcile
and its own look) catches what goes wrong for a job, shows that job with a line that says
why (and the fix when one is known), and leaves what is stored as the step that failed
left it, for the next pass to carry on. In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service.jobs import decider
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


class Breaks(FakeLauncher):
    """Its word on the instances of `broken` jobs raises `error`."""

    def __init__(self) -> None:
        super().__init__()
        self.broken: set[int] = set()
        self.error: Exception = RuntimeError("disk full\nmore lines of it")

    def status(self, instance_id: str):  # noqa: ANN201 - as the base's
        found = super().status(instance_id)
        if found.job_id in self.broken:
            raise self.error
        return found


@pytest.fixture()
def two(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, Breaks, int, int]:
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    launcher, ids = Breaks(), []
    for name in ("first", "second"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump({
            "name": name, "throughputs": {"V100": 0.5}, "steps": 2000, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
        [job] = service.launch(store, path, launcher=launcher,
                               checkpoint_root=str(tmp_path / "ckpt"))
        ids.append(job.id)
    return store, launcher, ids[0], ids[1]


def stored(store: PriceStore, job: int) -> tuple:
    placed = store.jobs.placements(job)
    return (store.jobs.get(job).state, len(placed), int(placed["end_at"].isna().sum()),
            [(m.kind, m.state) for m in store.moves.of_job(job)])


@pytest.mark.parametrize("reconcile", [True, False])
def test_an_instance_that_cannot_be_read_hides_no_other_job(two, reconcile: bool) -> None:
    store, launcher, first, second = two
    before = stored(store, first)
    launcher.broken = {first}
    shown = {s.record.id: s for s in service.status(store, launcher,
                                                    reconcile_first=reconcile)}
    assert set(shown) == {first, second}
    assert shown[first].trouble == ("not looked after in this pass: RuntimeError: disk full; "
                                    "tried again at the next pass")
    assert shown[second].trouble == "" and shown[second].instance_state == "running"
    assert stored(store, first) == before  # not taken for gone: nothing changed
    launcher.broken = set()  # the next pass sees it again
    [again] = service.status(store, launcher, first)
    assert again.trouble == "" and again.instance_state == "running"


def test_an_instance_its_launcher_no_longer_knows_says_the_fix(two) -> None:
    store, launcher, first, _ = two
    launcher.broken, launcher.error = {first}, InvalidInput("instance 'i-0': unknown")
    [shown] = service.status(store, launcher, first)
    assert shown.trouble == (
        f"not looked after in this pass: instance 'i-0': unknown; `costsched stop {first}` "
        f"ends its placement (its checkpoints are kept), then `costsched start {first}` "
        "starts it again")
    assert service.stop(store, launcher, first).state == "stopped"  # the fix works


def test_a_recovery_that_raises_leaves_the_job_to_the_next_pass(
        two, monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher, first, second = two
    for job in (first, second):  # both taken away: both are recovered
        launcher.set(store.jobs.placements(job)["instance"].iloc[-1], "preempted")
    placing = decider.place

    def place(store_: PriceStore, job, *args: object, **kwargs: object):  # noqa: ANN001, ANN202
        if job.resolved.job.name == "first":
            raise RuntimeError("the ranking broke")
        return placing(store_, job, *args, **kwargs)

    monkeypatch.setattr(decider, "place", place)
    shown = {s.record.id: s for s in service.status(store, launcher)}
    assert shown[first].trouble.startswith(
        "not looked after in this pass: RuntimeError: the ranking broke")
    assert stored(store, second)[3][-1] == ("recovery", "done")  # the other recovered
    # The first reads recovering, its lost placement ended, no move made: the state of a
    # recovery interrupted before its move, which the next pass carries on.
    assert stored(store, first) == ("recovering", 1, 0, [("launch", "done")])
    monkeypatch.setattr(decider, "place", placing)
    [again] = service.status(store, launcher, first)
    assert again.trouble == "" and stored(store, first)[3][-1] == ("recovery", "done")
    assert again.record.state == "running" and again.open_placement is not None


def test_a_stop_at_a_budget_cap_that_raises_leaves_the_other_jobs_stopped(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.config import BudgetsConfig
    from costsched.config.sections import NamedBudget
    from costsched.service.jobs import caps

    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    launcher, ids = Breaks(), []
    for name in ("first", "second"):  # in a budget of less than one watch interval
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump({
            "name": name, "throughputs": {"V100": 0.5}, "steps": 2000, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"],
                            "budget_name": "team"},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
        [job] = service.launch(store, path, launcher=launcher,
                               checkpoint_root=str(tmp_path / "ckpt"))
        ids.append(job.id)
    stopping = caps._stop_at_cap

    def stop(store_: PriceStore, launcher_, run, *args: object):  # noqa: ANN001, ANN202
        if run.record.name == "first":
            raise RuntimeError("terminate refused")
        return stopping(store_, launcher_, run, *args)

    monkeypatch.setattr(caps, "_stop_at_cap", stop)  # the newest is stopped first, then it
    team = BudgetsConfig(named={"team": NamedBudget(usd=0.01)})
    events = service.reconcile(store, launcher, budgets=team, watch_seconds=3600)
    assert f"job {ids[0]}: not looked after in this pass: RuntimeError: terminate refused; " \
           "tried again at the next pass" in events
    assert [store.jobs.get(j).state for j in ids] == ["running", "stopped"]
