"""`status` of many jobs of different shapes at once says of each what is computed for that
job alone: by `status` of the one job, and by the one-job functions it stands for (the
job's cost from `job_cost`, its progress from `progress`, its open placement from its own
placements, what the policy would do next from `migrate --dry-run` of the job)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched.costs import job_cost
from costsched.migration.launcher import Instance, Launcher, LaunchSpec
from costsched.migration.machine import candidate, offering_of
from costsched.model import Offering
from costsched.service import jobs as service
from costsched.service.jobs.runs import _running, progress
from costsched.service.prices import import_prices
from costsched.store import PriceStore

NOW = datetime(2026, 1, 2, 12, tzinfo=timezone.utc)
START = NOW - timedelta(hours=6)
HEADER = ("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,memory_gb,"
          "usd_per_hour,effective_at,source")
# Prices that change during the jobs' placements, in two regions and both markets.
PRICES = [
    ("us-east-1", "us-east-1a", "spot", 0.92, 0.0), ("us-east-1", "us-east-1a", "spot", 1.31, 2.5),
    ("us-east-1", "us-east-1b", "spot", 1.05, 0.0), ("us-east-1", "us-east-1b", "spot", 0.71, 4.0),
    ("us-west-2", "us-west-2a", "spot", 0.64, 0.0), ("us-west-2", "us-west-2a", "spot", 0.88, 5.0),
    ("us-east-1", "", "on_demand", 3.06, 0.0),
]
# Each job's shape: (name, policy, spec additions, its placements (zone, market, start and
# end in hours from START, None: open), what its instance says, its state).
SHAPES = [
    ("running", "dynamic-aware", {}, [("us-east-1a", "spot", 0, None)], 2100, "running"),
    ("quiet", "dynamic-aware", {}, [("us-east-1b", "spot", 1, None)], None, "running"),
    ("finished", "dynamic-aware", {}, [("us-east-1a", "spot", 0, 3)], None, "succeeded"),
    ("failed", "dynamic-aware", {}, [("us-east-1b", "spot", 0, 2)], None, "failed"),
    ("moved", "dynamic-aware", {"checkpoint": {"location": "/tmp/unused", "size_gb": 50}},
     [("us-east-1a", "spot", 0, 2), ("us-west-2a", "spot", 2, None)], 1500, "running"),
    ("recovered", "dynamic-aware", {},
     [("us-east-1b", "spot", 0, 1), ("us-east-1a", "spot", 1, 4), ("us-east-1b", "spot", 4, None)],
     None, "running"),
    ("deadline", "spot-anywhere",
     {"constraints": {"regions": ["us-east-1"], "markets": ["spot", "on_demand"],
                      "gpu_models": ["V100"], "deadline": "60h"}},
     [("us-east-1a", "spot", 0, 1), ("", "on_demand", 1, None)], 900, "running"),
    ("gang", "dynamic-aware", {"num_nodes": 2}, [("us-east-1b", "spot", 0, None)], 3000,
     "running"),
    ("budgeted", "dynamic-aware",
     {"constraints": {"regions": ["us-east-1"], "markets": ["spot"], "budget": 40}},
     [("us-east-1a", "spot", 0.5, None)], 1200, "running"),
]


class Instances(Launcher):
    """Instances in memory, as the tests set them."""

    name = "memory"

    def __init__(self) -> None:
        self.states: dict[str, Instance] = {}

    def can_launch(self, offering: Offering) -> bool:
        return True

    def launch(self, spec: LaunchSpec) -> Instance:
        raise AssertionError("nothing is launched by a status")

    def status(self, instance_id: str) -> Instance:
        return self.states[instance_id]

    def request_stop(self, instance_id: str) -> None:
        raise AssertionError("nothing is stopped by a status")

    def terminate(self, instance_id: str) -> None:
        raise AssertionError("nothing is ended by a status")

    def instances(self, job_id: int | None = None) -> list[Instance]:
        return [i for i in self.states.values() if job_id in (None, i.job_id)]


def _key(zone: str, market: str) -> tuple:
    region = zone[:-1] if zone else "us-east-1"
    return ("aws", region, zone, "p3.2xlarge", market, "linux")


def _team(path: Path, copies: int) -> tuple[PriceStore, Instances]:
    """`copies` jobs of each shape, interleaved."""
    store = PriceStore(f"sqlite:///{path / 'jobs.sqlite'}")
    csv = path / "prices.csv"
    csv.write_text("\n".join([HEADER, *(
        f"aws,{region},{zone},p3.2xlarge,{market},linux,V100,1,8,61.0,{usd},"
        f"{(START + timedelta(hours=h)):%Y-%m-%dT%H:%M:%SZ},test prices"
        for region, zone, market, usd, h in PRICES)]) + "\n")
    import_prices(store, [csv])
    launcher = Instances()
    for copy in range(copies):
        for name, policy, extra, placed, step, state in SHAPES:
            spec = {"name": f"{name}-{copy}", "run": "python train.py",
                    "throughputs": {"V100": 0.025}, "steps": 4000,
                    "checkpoint": {"location": "/tmp/unused", "size_gb": 0.1},
                    "constraints": {"regions": ["us-east-1", "us-west-2"], "markets": ["spot"]},
                    **extra}
            job_id = store.jobs.create(spec["name"], {"spec": spec, "source": "test",
                                                      "launcher": launcher.name},
                                       4000, at=START, policy=policy)
            store.jobs.transition(job_id, "running", at=START)
            instance = ""
            for n, (zone, market, begin, end) in enumerate(placed):
                instance = f"m-{job_id}-{n}"
                reason = "launch" if n == 0 else "migration" if name == "moved" else "recovery"
                store.jobs.place(job_id, _key(zone, market), gpu_model="V100", gpu_count=1,
                                 at=START + timedelta(hours=begin),
                                 usd_per_hour=0.9 + n / 10, reason=reason, instance=instance)
                if n == len(placed) - 2 and name in ("moved", "recovered"):
                    # The move to the last placement, started from this one and done.
                    there = offering_of({"key": list(_key(placed[-1][0], placed[-1][1])),
                                         "gpu_model": "V100", "gpu_count": 1})
                    move = store.moves.create(
                        job_id, "migration" if name == "moved" else "recovery",
                        [candidate(there, 0.9)], at=START + timedelta(hours=end),
                        source_instance=instance)
                    store.moves.advance(move, "done", at=START + timedelta(hours=end))
                if end is not None:
                    store.jobs.end_placement(job_id, START + timedelta(hours=end),
                                             instance=instance)
            if name != "quiet":
                store.jobs.record_progress(job_id, 100.0 + copy, at=START + timedelta(hours=1))
            if state != "running":
                store.jobs.transition(job_id, state, at=START + timedelta(hours=placed[-1][3]),
                                      detail="exit code 2: out of memory")
            launcher.states[instance] = Instance(
                instance, job_id, "a0", _key(placed[-1][0], placed[-1][1]),
                state if state == "running" else "terminated", step=step)
    return store, launcher


@pytest.fixture
def team(tmp_path: Path) -> tuple[PriceStore, Instances]:
    return _team(tmp_path, copies=2)


def _decide(store: PriceStore, launcher: Instances) -> dict[int, service.MigrationAdvice]:
    """Every running job decided, as the daemon's re-plan decides (its decision kept), told
    to stop before any move starts: nothing moves."""
    return {a.job_id: a for a in service.migrate(store, launcher, at=NOW, stop=lambda: True,
                                                 decided_by="the test")}


def _row(s: service.JobStatus) -> tuple:
    """Everything `status` says of a job (its record as read, before the steps it reported
    were stored)."""
    placement = None if s.placement is None else s.placement.to_dict()
    return (s.record.id, s.record.state, placement, s.instance_state, s.steps_left,
            s.reported, s.progress, s.cost.compute_usd, s.cost.egress_usd, s.cost.total_usd,
            s.cost.placements.to_dict("records"), s.cost.moves.to_dict("records"),
            [m.id for m in s.moves], s.next, s.decision, s.failure, s.checkpoint_error, s.nodes)


def test_status_of_every_shape_at_once_is_each_jobs_alone(
        team: tuple[PriceStore, Instances]) -> None:
    store, launcher = team
    # Reconciled once (steps reported are stored): then every status below reads alike.
    service.reconcile(store, launcher, at=NOW)
    _decide(store, launcher)
    together = service.status(store, launcher, at=NOW, reconcile_first=False)
    assert [s.record.name.rsplit("-", 1)[0] for s in together[:len(SHAPES)]] == [
        shape[0] for shape in SHAPES]
    for s in together:
        [alone] = service.status(store, launcher, s.record.id, at=NOW,
                                 reconcile_first=False)
        assert _row(alone) == _row(s)
    # The shapes differ where they should: the test covers each.
    by_name = {s.record.name: s for s in together}
    assert by_name["moved-0"].cost.egress_usd > 0  # 50 GB across regions, charged once
    assert len(by_name["moved-0"].cost.moves) == 1
    assert by_name["gang-0"].nodes == 2 and by_name["gang-0"].cost.placements["nodes"].tolist() \
        == [2]
    assert by_name["deadline-0"].placement["market"] == "on_demand"
    assert not by_name["quiet-0"].reported and by_name["running-0"].reported
    assert by_name["failed-0"].failure is not None
    # It exited 0 at step 100 of its 4,000: its own share, and that said.
    assert by_name["finished-0"].placement is None
    assert by_name["finished-0"].progress == pytest.approx(100 / 4000)
    assert by_name["finished-0"].steps_not_reached.startswith("exited 0 at step 100 of 4,000")
    advised = [s for s in together if s.next]
    assert {s.record.policy for s in advised} == {"dynamic-aware", "spot-anywhere"}


def test_status_of_every_shape_is_what_the_one_job_functions_say(
        team: tuple[PriceStore, Instances]) -> None:
    store, launcher = team
    service.reconcile(store, launcher, at=NOW)
    decided = _decide(store, launcher)
    together = service.status(store, launcher, at=NOW, reconcile_first=False)
    for s in together:
        job_id = s.record.id
        run = _running(store, job_id)
        cost = job_cost(store, job_id, now=NOW, checkpoint_gb=run.checkpoint_gb)
        nodes = run.nodes
        assert s.cost.compute_usd == pytest.approx(cost.compute_usd * nodes, rel=1e-12)
        assert s.cost.egress_usd == pytest.approx(cost.egress_usd, rel=1e-12)
        assert (s.steps_left, s.reported) == progress(store, run, NOW)
        placements = store.jobs.placements(job_id)
        open_ = placements[placements["end_at"].isna()]
        if open_.empty:
            assert s.placement is None
        else:
            newest = open_.iloc[-1]
            assert s.placement.index.tolist() == newest.index.tolist()
            assert all(a == b or (pd.isna(a) and pd.isna(b))
                       for a, b in zip(s.placement.tolist(), newest.tolist(), strict=True))
        if s.record.state == "running" and s.steps_left > 0:  # its decision, as kept
            assert s.next == decided[job_id].reason
            assert s.decision.decided_at == NOW and s.decision.decided_by == "the test"
        else:
            assert s.next == "" and s.decision is None


def test_a_large_status_shows_each_job_as_it_does_alone(tmp_path: Path) -> None:
    store, launcher = _team(tmp_path, copies=4)
    service.reconcile(store, launcher, at=NOW)
    _decide(store, launcher)
    together = service.status(store, launcher, at=NOW, reconcile_first=False)
    assert len(together) == 4 * len(SHAPES)
    assert sum(bool(s.next) for s in together) >= 4 * 2  # two decided policies, each copy
    for s in together:
        [alone] = service.status(store, launcher, s.record.id, at=NOW, reconcile_first=False)
        assert _row(alone) == _row(s)
