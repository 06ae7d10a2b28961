"""A pass does per pass what does not change from job to job: one market view for the jobs
whose throughputs are alike, a job's spec resolved only when something needs it, and a
move decided again under the job's lease only when the job changed since its decision."""

from __future__ import annotations

from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest

from costsched.migration.launcher import Instance, LaunchSpec
from costsched.policies.market import MarketView
from costsched.service import jobs as service
from costsched.service.jobs import move as move_module
from costsched.service.jobs import runs as runs_module
from costsched.service.prices import import_prices
from costsched.store import PriceStore
from tests.costsched.service.test_migrate_many import NOW, add_running, spec
from tests.costsched.service.test_status_scale import Instances

ROOT = Path(__file__).resolve().parents[3]


class Movable(Instances):
    """Instances in memory that a move may stop, launch and end."""

    def launch(self, spec: LaunchSpec) -> Instance:
        instance = Instance(f"m-{spec.job_id}-{spec.attempt}", spec.job_id, spec.attempt,
                            spec.offering.key, "running")
        self.states[instance.id] = instance
        return instance

    def _set(self, instance_id: str, state: str) -> None:
        old = self.states[instance_id]
        self.states[instance_id] = Instance(old.id, old.job_id, old.attempt,
                                            old.offering_key, state)

    def request_stop(self, instance_id: str) -> None:
        self._set(instance_id, "stopped")

    def terminate(self, instance_id: str) -> None:
        self._set(instance_id, "terminated")


def mover(store: PriceStore, launcher: Movable, where: Path) -> int:
    """A job on the dearest zone, where moving pays, whose checkpoints go to `where`."""
    job_id = add_running(store, launcher, 2)  # us-east-1c
    store.jobs.record_progress(job_id, 200.0, at=NOW - timedelta(hours=5),
                               checkpoint_location=str(where / f"job-{job_id}"))
    return job_id


@pytest.fixture()
def store(tmp_path: Path) -> PriceStore:
    store = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    return store


def counted(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list:
    """Calls of `owner.name` (their arguments) from now on; the calls still go through."""
    calls: list = []
    real = getattr(owner, name)

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - whatever it takes
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


def test_jobs_whose_throughputs_are_alike_share_one_market_view(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each job is its own model (its name): the jobs of two throughput figures make one
    view per figure and pace they run at (a job that reported steps is priced at its
    measured pace, n % 5 hundred steps in its first hour; one that reported none at its
    figure's), not one per job, and decide as they do alone."""
    launcher = Instances()
    ids = [add_running(store, launcher, n) for n in range(24)]  # kinds alternate figures
    views = counted(monkeypatch, MarketView, "for_model")
    together = service.migrate(store, launcher, dry_run=True, at=NOW)
    assert len(together) == len(ids)
    alike = {(str(spec(n)["throughputs"]), n % 5) for n in range(24)}
    assert len(views) == len(alike) == 10  # of 24 jobs
    for advice in together[:4]:
        [alone] = service.migrate(store, launcher, advice.job_id, dry_run=True, at=NOW)
        assert (alone.decision, alone.reason) == (advice.decision, advice.reason)


def test_a_move_of_a_job_unchanged_under_its_lease_is_not_decided_again(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    launcher = Movable()
    job_id = mover(store, launcher, tmp_path)
    decided = counted(monkeypatch, move_module, "_decide")
    [advice] = service.migrate(store, launcher, job_id, at=NOW, force=True)
    assert advice.started is not None and advice.started.state == "done"
    assert len(decided) == 1  # the pass's decision stands: nothing it read changed


def test_a_move_of_a_job_that_changed_under_its_lease_is_decided_again(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Its step moved on between the decision and the lease (another costsched stored
    it): the decision is made again from the job as it is then."""
    launcher = Movable()
    job_id = mover(store, launcher, tmp_path)
    taken = store.leases.holding_many

    @contextmanager
    def stepped_meanwhile(names: list[str], ttl: float):  # noqa: ANN202 - a context manager
        store.jobs.record_step(job_id, 3000, at=NOW)
        with taken(names, ttl) as mine:
            yield mine

    [first] = service.migrate(store, launcher, job_id, dry_run=True, at=NOW, force=True)
    monkeypatch.setattr(store.leases, "holding_many", stepped_meanwhile)
    decided = counted(monkeypatch, move_module, "_decide")
    [advice] = service.migrate(store, launcher, job_id, at=NOW, force=True)
    assert len(decided) == 2
    assert decided[1][1][0][0].record.steps_done == 3000  # decided from the job as it is
    assert advice.stay_usd < first.stay_usd  # the figures of its 1,000 steps left, not 3,800


def test_a_pass_resolves_a_spec_only_when_something_needs_it(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher = Instances()
    ids = [add_running(store, launcher, n) for n in range(6)]
    resolved = counted(monkeypatch, runs_module, "resolve")
    runs = runs_module._runs(store, ids)
    assert [r.launcher for r in runs.values()] == ["memory"] * 6
    sizes = {j: (r.checkpoint_gb, r.nodes) for j, r in runs.items()}
    assert resolved == []  # its record, launcher, checkpoint size and nodes: no resolution
    for job_id, run in runs.items():
        assert sizes[job_id] == (run.resolved.job.checkpoint_gb, run.resolved.nodes)
        assert run.home_region == (run.resolved.job.constraints.regions or ("",))[0]
    assert 0 < len(resolved) <= 6
    again = len(resolved)
    assert [r.resolved for r in runs.values()]  # each run keeps its resolution
    assert len(resolved) == again


def test_status_of_a_team_resolves_none_of_its_specs(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs that report their steps need no resolution for their state, progress and
    cost; a finished job's cost is its own placements'."""
    launcher = Instances()
    ids = [add_running(store, launcher, n) for n in range(1, 5)]  # steps reported
    finished = ids[0]
    store.jobs.end_placement(finished, NOW - timedelta(hours=1), instance=f"m-{finished}")
    store.jobs.transition(finished, "succeeded", at=NOW - timedelta(hours=1))
    resolved = counted(monkeypatch, runs_module, "resolve")
    shown = service.status(store, None, at=NOW)
    assert resolved == []
    assert [s.record.id for s in shown] == ids
    costs = {s.record.id: s.cost for s in shown}
    for job_id, cost in costs.items():  # its own placements, charged up to its end or now
        assert list(cost.placements["job_id"]) == [job_id]
        assert cost.placements["hours"].sum() == pytest.approx(5 if job_id == finished else 6)
        assert cost.total_usd == pytest.approx(cost.placements["usd"].sum())
        assert cost.total_usd > 0


def test_specs_that_differ_in_their_name_are_checked_once_and_resolved_each_as_its_own(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher = Instances()
    ids = [add_running(store, launcher, n) for n in (0, 12, 24)]  # one spec but the name
    parsed = counted(monkeypatch, runs_module, "parse")
    runs = runs_module._runs(store, ids)
    found = [runs[j].resolved for j in ids]
    assert len(parsed) == 1
    for n, resolved in zip((0, 12, 24), found, strict=True):
        alone = runs_module.resolve(runs_module.parse(spec(n), "test"),
                                    runs_module.table_with_measured(store), NOW)
        assert (resolved.job.name, resolved.job.model) == (f"mixed-{n}", f"mixed-{n}")
        assert resolved.job == alone.job
        assert resolved.table.get(resolved.job.model, "A100", 1) == \
            alone.table.get(alone.job.model, "A100", 1)
