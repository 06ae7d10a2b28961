"""`migrate` over many jobs of different models, constraints and checkpoints decides each
as it would alone, and starts a move only under the job's lease, deciding again there."""

from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.service import jobs as service
from costsched.service.prices import import_prices
from costsched.store import PriceStore
from tests.costsched.service.test_status_scale import Instances

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 1, 2, 12, tzinfo=timezone.utc)
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
JOBS = 120  # each kind, zone and step reported alike in two jobs (n % 60)
THROUGHPUTS = ({"V100": 0.025}, {"V100": 0.05, "A100": 0.1})
CONSTRAINTS = ({"regions": ["us-east-1"], "markets": ["spot"]},
               {"markets": ["spot", "on_demand"]},
               {"clouds": ["aws"], "gpu_models": ["V100"]})
CHECKPOINT_GB = (0.1, 5.0)
KINDS = len(THROUGHPUTS) * len(CONSTRAINTS) * len(CHECKPOINT_GB)  # 12


def spec(n: int) -> dict:
    kind = n % KINDS
    return {"name": f"mixed-{n}", "run": "python train.py", "steps": 4000,
            "throughputs": THROUGHPUTS[kind % 2],
            "constraints": CONSTRAINTS[kind // 2 % 3],
            "checkpoint": {"location": "/tmp/unused", "size_gb": CHECKPOINT_GB[kind // 6]}}


def add_running(store: PriceStore, launcher: Instances, n: int) -> int:
    """Job n, running on one of three zones since six hours before NOW, n % 5 hundred
    steps reported."""
    start = NOW - timedelta(hours=6)
    job_id = store.jobs.create(f"mixed-{n}", {"spec": spec(n), "source": "test",
                                              "launcher": launcher.name},
                               4000, at=start, policy="dynamic-aware")
    key = ("aws", "us-east-1", ZONES[n % 3], "p3.2xlarge", "spot", "linux")
    store.jobs.transition(job_id, "running", at=start)
    store.jobs.place(job_id, key, gpu_model="V100", gpu_count=1, at=start, usd_per_hour=0.92,
                     reason="launch", instance=f"m-{job_id}")
    store.jobs.record_progress(job_id, 100.0 * (n % 5), at=start + timedelta(hours=1))
    from costsched.migration.launcher import Instance

    launcher.states[f"m-{job_id}"] = Instance(f"m-{job_id}", job_id, "a0", key, "running")
    return job_id


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[PriceStore, Instances]:
    store = PriceStore(f"sqlite:///{tmp_path_factory.mktemp('mixed') / 'jobs.sqlite'}")
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    launcher = Instances()
    for n in range(JOBS):
        add_running(store, launcher, n)
    return store, launcher


def test_every_job_decided_at_once_is_decided_as_alone(
        mixed: tuple[PriceStore, Instances]) -> None:
    store, launcher = mixed
    together = service.migrate(store, launcher, dry_run=True, at=NOW)
    assert len(together) == JOBS
    # Models, scopes and checkpoints differ: so do the decisions.
    assert len({(a.decision.choice, round(a.move_usd, 6)) for a in together}) > KINDS
    assert 0 < sum(a.decision.moves for a in together) < JOBS
    # Jobs alike in everything the decision reads decide alike.
    alike: dict[tuple, set] = {}
    for n, a in enumerate(together):
        alike.setdefault((n % KINDS, n % 3, n % 5), set()).add(
            (a.decision.choice, a.stay_usd, a.move_usd, a.reason))
    assert all(len(found) == 1 for found in alike.values())
    # One job of each model, scope and checkpoint size, decided alone, in a pass of its own.
    for n in range(KINDS):
        advice = together[n]
        [alone] = service.migrate(store, launcher, advice.job_id, dry_run=True, at=NOW)
        assert alone.decision == advice.decision
        assert (alone.stay_usd, alone.move_usd, alone.reason) == \
            (advice.stay_usd, advice.move_usd, advice.reason)


@pytest.fixture()
def one_mover(tmp_path: Path) -> tuple[PriceStore, Instances, int]:
    """A job on the dearest zone, where moving pays."""
    store = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    launcher = Instances()
    job_id = add_running(store, launcher, 2)  # us-east-1c, the dearest
    [advice] = service.migrate(store, launcher, job_id, dry_run=True, at=NOW, force=True)
    assert advice.decision.moves
    return store, launcher, job_id


def test_no_move_starts_while_another_costsched_holds_the_job(
        one_mover: tuple[PriceStore, Instances, int]) -> None:
    store, launcher, job_id = one_mover
    assert store.leases.acquire(f"steps:{job_id}", "other-host:1:abc", 300,
                                datetime.now(timezone.utc))
    [advice] = service.migrate(store, launcher, job_id, at=NOW, force=True)
    assert advice.started is None
    assert "not moved: another costsched is acting on the job" in advice.reason
    assert store.moves.of_job(job_id) == []  # nothing created, nothing launched


def test_a_move_is_decided_again_under_the_lease(
        one_mover: tuple[PriceStore, Instances, int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another costsched moved the job between this one's decision and its taking the
    lease: nothing starts, and the reason says so."""
    store, launcher, job_id = one_mover
    taken = store.leases.holding_many

    @contextmanager
    def moved_meanwhile(names: list[str], ttl: float):  # noqa: ANN202 - a context manager
        store.jobs.end_placement(job_id, NOW, instance=f"m-{job_id}")
        store.jobs.place(job_id, ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot",
                                  "linux"), gpu_model="V100", gpu_count=1, at=NOW,
                         usd_per_hour=0.92, reason="migration", instance="elsewhere")
        with taken(names, ttl) as mine:
            yield mine

    monkeypatch.setattr(store.leases, "holding_many", moved_meanwhile)
    [advice] = service.migrate(store, launcher, job_id, at=NOW, force=True)
    assert advice.started is None
    assert f"not moved: it is no longer placed on m-{job_id}" in advice.reason
    assert store.moves.of_job(job_id) == []
