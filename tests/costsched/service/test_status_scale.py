"""A pass over many jobs decides and shows each as it would one job at a time; `status`
filters, pages and reads without reconciling when asked."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.migration.launcher import Instance, Launcher, LaunchSpec
from costsched.model import Offering
from costsched.service import jobs as service
from costsched.service.prices import import_prices
from costsched.store import PriceStore

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 1, 2, 12, tzinfo=timezone.utc)
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
JOBS = 210  # a few hundred: 140 running


class Instances(Launcher):
    """Instances in memory, running until told otherwise; counts the calls it gets."""

    name = "memory"

    def __init__(self) -> None:
        self.states: dict[str, Instance] = {}
        self.calls = 0

    def can_launch(self, offering: Offering) -> bool:
        return True

    def launch(self, spec: LaunchSpec) -> Instance:
        raise AssertionError("nothing is launched by a dry run")

    def status(self, instance_id: str) -> Instance:
        self.calls += 1
        return self.states[instance_id]

    def request_stop(self, instance_id: str) -> None:
        raise AssertionError("nothing is stopped by a dry run")

    def terminate(self, instance_id: str) -> None:
        raise AssertionError("nothing is ended by a dry run")

    def instances(self, job_id: int | None = None) -> list[Instance]:
        self.calls += 1
        return [i for i in self.states.values() if job_id in (None, i.job_id)]


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> tuple[PriceStore, Instances]:
    """JOBS jobs of a team: two in three running on one of three zones (priced apart, and
    with different steps done, so that their decisions differ), the rest finished."""
    store = PriceStore(f"sqlite:///{tmp_path_factory.mktemp('team') / 'jobs.sqlite'}")
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    launcher = Instances()
    start = NOW - timedelta(hours=6)
    for n in range(JOBS):
        spec = {"name": f"team-{n}", "run": "python train.py", "throughputs": {"V100": 0.025},
                "steps": 4000, "checkpoint": {"location": "/tmp/unused", "size_gb": 0.1},
                "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}
        job_id = store.jobs.create(spec["name"], {"spec": spec, "source": "test",
                                                  "launcher": launcher.name},
                                   4000, at=start, policy="dynamic-aware")
        key = ("aws", "us-east-1", ZONES[n % 3], "p3.2xlarge", "spot", "linux")
        store.jobs.transition(job_id, "running", at=start)
        store.jobs.place(job_id, key, gpu_model="V100", gpu_count=1, at=start,
                         usd_per_hour=0.92, reason="launch", instance=f"m-{job_id}")
        store.jobs.record_progress(job_id, 100.0 * (n % 7), at=start + timedelta(hours=1))
        state = "running"
        if n % 3 == 2:
            store.jobs.end_placement(job_id, start + timedelta(hours=3), instance=f"m-{job_id}")
            store.jobs.transition(job_id, "succeeded", at=start + timedelta(hours=3))
            state = "succeeded"
        launcher.states[f"m-{job_id}"] = Instance(f"m-{job_id}", job_id, "a0", key, state)
    return store, launcher


def test_decisions_for_every_job_at_once_are_those_made_one_job_at_a_time(
        team: tuple[PriceStore, Instances]) -> None:
    store, launcher = team
    together = service.migrate(store, launcher, dry_run=True, at=NOW)
    assert len(together) == JOBS - JOBS // 3
    moving = sum(a.decision.moves for a in together)
    assert 0 < moving < len(together)  # the test has both kinds of decision in it
    # One job of each (zone, steps done) combination the store has, each decided alone.
    sample = {(a.job_id - 1) % 21: a for a in together}
    assert len(sample) == 14  # the 14 running combinations of 21
    for advice in sample.values():
        [alone] = service.migrate(store, launcher, advice.job_id, dry_run=True, at=NOW)
        assert alone.decision.choice == advice.decision.choice
        assert alone.stay_usd == advice.stay_usd and alone.move_usd == advice.move_usd
        assert alone.reason == advice.reason


def test_status_of_every_job_costs_what_each_costs_alone(
        team: tuple[PriceStore, Instances]) -> None:
    store, launcher = team
    shown = service.status(store, launcher, at=NOW, reconcile_first=False)
    assert len(shown) == JOBS
    for s in shown[:: JOBS // 10]:
        [alone] = service.status(store, launcher, s.record.id, at=NOW, reconcile_first=False)
        assert alone.cost.total_usd == pytest.approx(s.cost.total_usd, rel=1e-12)
        assert alone.steps_left == s.steps_left
        assert alone.placement is None or alone.placement["id"] == s.placement["id"]


def test_status_filters_and_pages(
        team: tuple[PriceStore, Instances]) -> None:
    store, launcher = team
    running = service.status(store, launcher, at=NOW, reconcile_first=False,
                             states=["running"])
    assert {s.record.state for s in running} == {"running"}
    assert len(running) == JOBS - JOBS // 3
    few = service.status(store, launcher, at=NOW, reconcile_first=False, name="team-1?",
                         limit=4)
    assert [s.record.name for s in few] == ["team-16", "team-17", "team-18", "team-19"]
    # Nothing decided yet: no decision shown, whatever the number of jobs shown.
    assert not any(s.next or s.decision for s in running + few)


def test_status_without_reconciling_only_reads(team: tuple[PriceStore, Instances]) -> None:
    store, launcher = team
    before = launcher.calls
    service.status(store, launcher, at=NOW, reconcile_first=False, states=["succeeded"])
    assert launcher.calls == before  # no instance listed or asked about
