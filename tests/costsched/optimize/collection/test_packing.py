"""Shared-instance packing against brute force on small cases, and end to end from specs."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from costsched.jobspec import resolve
from costsched.model import InvalidInput
from costsched.optimize.collection import (
    CollectionProblem,
    PackingProblem,
    packing,
    plan_collection_shared,
)
from costsched.optimize.planner import prepare
from costsched.taskfile import load
from costsched.throughput import ThroughputTable


def make(steps, whole_sps, slot_sps, price, gpus, deadline=None, group=None,
         capacity=None, budget=None) -> PackingProblem:
    """Jobs x offerings without preemptions: hours = steps / steps per second."""
    steps = np.asarray(steps, float)[:, None]
    whole_sps, slot_sps = np.asarray(whole_sps, float), np.asarray(slot_sps, float)
    price, gpus = np.asarray(price, float), np.asarray(gpus)
    n_jobs, n_off = whole_sps.shape
    hours = steps / whole_sps / 3600
    group = np.arange(n_off) if group is None else np.asarray(group)
    n_groups = int(group.max()) + 1
    capacity = np.full(n_groups, np.inf) if capacity is None else np.asarray(capacity, float)
    deadline = np.full(n_jobs, np.inf) if deadline is None else np.asarray(deadline, float)
    base = CollectionProblem(
        jobs=[f"j{i}" for i in range(n_jobs)], offerings=[f"o{i}" for i in range(n_off)],
        hours=hours, cost=hours * price, steps_per_second=whole_sps, usd_per_hour=price,
        group=group, capacity=capacity, group_names=[f"g{g}" for g in range(n_groups)],
        deadline_hours=deadline, allowed=np.ones((n_jobs, n_off), bool), budget_usd=budget)
    slot_hours = steps / slot_sps / 3600
    return PackingProblem(base, gpus, slot_hours, slot_sps, np.ones((n_jobs, n_off), bool))


def brute_force(pp: PackingProblem) -> float:
    """The least cost over every way to place each job alone or on a GPU of an instance."""
    p = pp.base
    n_jobs, n_off = p.hours.shape
    choices = [("whole", o, 0) for o in range(n_off)]
    choices += [("slot", o, k) for o in range(n_off) if pp.gpus[o] > 1 for k in range(n_jobs)]
    best = np.inf
    for combo in itertools.product(choices, repeat=n_jobs):
        cost, used, hours = 0.0, np.zeros(len(p.capacity)), {}
        ok = True
        for j, (kind, o, k) in enumerate(combo):
            h = p.hours[j, o] if kind == "whole" else pp.slot_hours[j, o]
            if not h <= p.deadline_hours[j]:
                ok = False
                break
            if kind == "whole":
                cost += p.cost[j, o]
                used[p.group[o]] += 1
            else:
                hours.setdefault((o, k), []).append(h)
        if not ok:
            continue
        for (o, _), hs in hours.items():
            if len(hs) > pp.gpus[o]:
                ok = False
            cost += p.usd_per_hour[o] * max(hs)
            used[p.group[o]] += 1
        if ok and (used <= p.capacity).all() and (p.budget_usd is None
                                                  or cost <= p.budget_usd * (1 + 1e-9)):
            best = min(best, cost)
    return best


def test_eight_jobs_share_one_eight_gpu_instance() -> None:
    # 1xV100 at $3/h against 8xV100 at $20/h: $2.50 per GPU; 8 GPUs train 6x as fast.
    pp = make([3600.0] * 8, [[1.0, 6.0]] * 8, [[1.0, 1.0]] * 8, [3.0, 20.0], [1, 8])
    plan = packing.solve(pp)
    assert plan.feasible, plan.reasons
    assert len(plan.instances) == 1
    inst = plan.instances.iloc[0]
    assert inst["offering"] == "o1" and inst["gpus_used"] == 8 and inst["gpus_idle"] == 0
    assert set(inst["jobs"].split(", ")) == {f"j{i}" for i in range(8)}
    assert plan.total_cost == pytest.approx(20.0)
    assert (plan.assignment["instance"] == inst["instance"]).all()
    assert plan.assignment["cost"].sum() == pytest.approx(plan.total_cost)


def test_three_jobs_take_what_is_cheapest() -> None:
    # Three jobs cannot fill 8 GPUs: three single instances ($9) beat one 8-GPU one ($20).
    pp = make([3600.0] * 3, [[1.0, 6.0]] * 3, [[1.0, 1.0]] * 3, [3.0, 20.0], [1, 8])
    plan = packing.solve(pp)
    assert plan.total_cost == pytest.approx(brute_force(pp)) == pytest.approx(9.0)
    assert (plan.instances["offering"] == "o0").all() and len(plan.instances) == 3


@pytest.mark.parametrize("seed", range(25))
def test_random_small_cases_match_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_jobs = int(rng.integers(1, 4))
    gpus = np.array([1, 2, 4])
    price = rng.integers(1, 6, 3) * gpus * rng.uniform(0.5, 1.0, 3)
    slot = rng.integers(1, 4, (n_jobs, 3)).astype(float)
    whole = slot * gpus * 0.9
    steps = rng.integers(1, 4, n_jobs) * 3600.0
    deadline = rng.choice([0.5, 1.0, 2.0, np.inf], n_jobs)
    capacity = rng.choice([1.0, 2.0, np.inf], 3)
    budget = None if seed % 3 else float(rng.integers(3, 30))
    pp = make(steps, whole, slot, price, gpus, deadline, capacity=capacity, budget=budget)
    best = brute_force(pp)
    plan = packing.solve(pp)
    if not np.isfinite(best):
        assert not plan.feasible and plan.reasons
        return
    assert plan.feasible, plan.reasons
    assert plan.total_cost == pytest.approx(best, rel=1e-6)
    assert sorted(plan.assignment["job"]) == sorted(pp.base.jobs)
    per_instance = plan.assignment.groupby("instance").size()
    gpus_of = plan.instances.set_index("instance")["gpu_count"]
    assert (per_instance <= gpus_of[per_instance.index]).all()


@pytest.mark.parametrize("seed", range(6))
def test_several_instances_of_one_offering_match_brute_force(seed: int) -> None:
    # Five jobs, some identical, on 2-GPU instances (three of them may be rented): the
    # ordering of an offering's instances and of their hours must keep the least cost.
    rng = np.random.default_rng(100 + seed)
    gpus = np.array([1, 2])
    price = np.array([2.0, 2.0 * rng.uniform(0.6, 1.0)])
    slot = np.repeat(rng.integers(1, 4, (3, 2)).astype(float), [2, 2, 1], axis=0)
    steps = np.repeat(rng.integers(1, 5, 3) * 1800.0, [2, 2, 1])
    capacity = np.array([np.inf, rng.choice([1.0, 2.0, np.inf])])
    pp = make(steps, slot * gpus * 0.9, slot, price, gpus, capacity=capacity)
    plan = packing.solve(pp)
    assert plan.feasible, plan.reasons
    assert plan.total_cost == pytest.approx(brute_force(pp), rel=1e-9)
    assert (plan.assignment.groupby("instance").size() <= 2).all()


def test_a_deadline_a_slow_shared_gpu_cannot_meet_keeps_the_job_alone() -> None:
    # Job 0 needs 2 h on one GPU but has 1.5 h: it takes a whole 8-GPU instance (4x faster).
    pp = make([7200.0] * 8, [[1.0, 4.0]] * 8, [[1.0, 1.0]] * 8, [3.0, 20.0], [1, 8],
              deadline=[1.5] + [np.inf] * 7)
    plan = packing.solve(pp)
    assert plan.feasible, plan.reasons
    row = plan.assignment.set_index("job").loc["j0"]
    inst = plan.instances.set_index("instance").loc[row["instance"]]
    assert inst["jobs"] == "j0" and row["gpus"] == 8 and row["hours"] <= 1.5
    # j0: 0.5 h x $20; the other seven share an instance for 2 h ($40 < 7 x 2 h x $3).
    assert plan.total_cost == pytest.approx(0.5 * 20 + 2 * 20)
    assert plan.instances["gpus_used"].sort_values().tolist() == [7, 8]


def test_quota_limits_the_shared_instances() -> None:
    # At most one 2-GPU instance: the third job goes to the dearer single GPU.
    pp = make([3600.0] * 3, [[1.0, 2.0]] * 3, [[1.0, 1.0]] * 3, [3.0, 4.0], [1, 2],
              capacity=[np.inf, 1])
    plan = packing.solve(pp)
    assert (plan.instances["offering"] == "o1").sum() == 1
    assert plan.total_cost == pytest.approx(7.0) == pytest.approx(brute_force(pp))


def test_infeasible_plans_name_the_reason() -> None:
    slow = make([7200.0], [[1.0, 1.5]], [[1.0, 1.0]], [3.0, 20.0], [1, 8], deadline=[1.0])
    plan = packing.solve(slow)
    assert not plan.feasible
    assert plan.reasons[0].startswith("job j0 cannot meet its deadline of 1 h")
    assert "o1" in plan.reasons[0] and "needs 1.3334 h" in plan.reasons[0]  # 4/3 h, one figure
    tight = make([3600.0] * 3, [[1.0, 2.0]] * 3, [[1.0, 1.0]] * 3, [3.0, 4.0], [1, 2],
                 capacity=[1, 0])
    assert packing.solve(tight).reasons[0].startswith("quotas: the 3 jobs do not all fit")
    poor = make([3600.0] * 8, [[1.0, 6.0]] * 8, [[1.0, 1.0]] * 8, [3.0, 20.0], [1, 8],
                budget=15.0)
    reason = packing.solve(poor).reasons[0]
    assert "costs $20.00, $5.00 more than the budget of $15.00" in reason


def test_move_charges_keep_a_job_where_it_is() -> None:
    # Two jobs: sharing o1 for 1 h ($5) beats two single GPUs ($6).
    pp = make([3600.0] * 2, [[1.0, 1.5]] * 2, [[1.0, 1.0]] * 2, [3.0, 5.0], [1, 2])
    assert packing.solve(pp).instances["gpus_used"].tolist() == [2]
    pp.slot_extra = np.array([[0.0, 1.5], [0.0, 0.0]])  # j0 runs on o0: moving it costs $1.50
    plan = packing.solve(pp)
    # Sharing would now cost $6.50: each job on its own single GPU, $6.
    assert plan.instances["offering"].tolist() == ["o0", "o0"]
    assert plan.objective == pytest.approx(6.0)


SPEC = """\
name: sweep
model: ResNet-50 (batch size 64)
steps: {steps}
sweep: {{SEED: [{seeds}]}}
constraints: {{markets: [on_demand], deadline: {deadline}}}
"""


def offerings(per_gpu_8: float) -> pd.DataFrame:
    rows = [("p3.2xlarge", 1, 3.06), ("p3.16xlarge", 8, 8 * per_gpu_8)]
    frame = pd.DataFrame([{"cloud": "aws", "region": "us-east-1", "zone": "", "instance_type": t,
                           "market": "on_demand", "os": "linux", "gpu_model": "V100",
                           "gpu_count": n, "usd_per_hour": p} for t, n, p in rows])
    return prepare(frame)


def resolved(tmp_path: Path, n: int, deadline: str = "100h", steps: int = 20_000):
    path = tmp_path / "sweep.yaml"
    seeds = ", ".join(str(i) for i in range(n))
    path.write_text(SPEC.format(steps=steps, seeds=seeds, deadline=deadline))
    table = ThroughputTable.load()
    at = pd.Timestamp("2020-03-01", tz="UTC").to_pydatetime()
    return [resolve(spec, table, at, source=str(path)) for spec in load(path)]


def test_plan_from_specs_puts_a_sweep_on_one_instance(tmp_path: Path) -> None:
    jobs = resolved(tmp_path, 8)
    plan = plan_collection_shared(jobs, offerings(2.5))
    assert plan.feasible, plan.reasons
    assert plan.instances["instance"].nunique() == 1 and plan.instances["gpus_used"].iloc[0] == 8
    one = plan.assignment["hours"].iloc[0]
    assert plan.total_cost == pytest.approx(20.0 * one)
    dear = plan_collection_shared(jobs, offerings(3.5))  # dearer per GPU than 1xV100
    assert (dear.instances["gpu_count"] == 1).all() and len(dear.instances) == 8


def test_plan_rejects_an_objective_it_cannot_pack(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="expected one of cost, time"):
        plan_collection_shared(resolved(tmp_path, 2), offerings(2.5), "throughput-per-dollar")


def test_min_makespan_within_a_budget(tmp_path: Path) -> None:
    jobs = resolved(tmp_path, 2)
    cheap = plan_collection_shared(jobs, offerings(2.5))
    fast = plan_collection_shared(jobs, offerings(2.5), "time")
    assert fast.makespan_hours < cheap.makespan_hours  # each alone on 8 GPUs
    capped = plan_collection_shared(jobs, offerings(2.5), "time", budget_usd=cheap.total_cost)
    assert capped.total_cost <= cheap.total_cost * (1 + 1e-9)
