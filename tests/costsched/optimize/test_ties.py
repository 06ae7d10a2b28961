"""Ties between offerings of equal expected cost go by the documented rule (fewer GPUs, then
the on-demand reference price, then the offering key), never by how names sort: in the
per-job ranking, the live policies and the collection plans with and without shared
instances. With linear scaling a whole 8-GPU instance costs exactly what one GPU does."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

from costsched.jobspec import parse, resolve
from costsched.optimize.collection import plan_collection_shared
from costsched.optimize.collection.build import plan_collection
from costsched.optimize.job import Workload
from costsched.optimize.planner import plan_job, prepare
from costsched.optimize.rank import best_of, tie_order, tie_rounded
from costsched.policies import JOB_SCOPE, JobState, make_policy, view_from_prices
from costsched.throughput import ThroughputTable

AT = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
# (cloud, region, instance type, GPUs, USD/h): exactly linear in the GPU count.
AWS = [("aws", "us-east-1", "p3.16xlarge", 8, 24.48), ("aws", "us-east-1", "p3.2xlarge", 1, 3.06)]
AZURE = [("azure", "eastus", "Standard_NC12s_v3", 2, 6.12),
         ("azure", "eastus", "Standard_NC6s_v3", 1, 3.06)]


def frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame([dict(cloud=c, region=r, zone="", instance_type=t, market="on_demand",
                              os="linux", gpu_model="V100", gpu_count=n, vcpus=8 * n,
                              memory_gb=61.0 * n, usd_per_hour=p, effective_at=AT,
                              source="test", on_demand_usd_per_hour=p)
                         for c, r, t, n, p in rows])


def job(name: str = "j", counts: tuple[int, ...] = ()):  # noqa: ANN201
    constraints = {"gpu_counts": list(counts)} if counts else {}
    spec = parse({"name": name, "run": "true", "steps": 36_000,
                  "throughputs": {"V100": 1.0, "V100:2": 2.0, "V100:8": 8.0},
                  "constraints": constraints}, "<test>")
    return resolve(spec, ThroughputTable(), AT, source="<test>")


@pytest.mark.parametrize("rows", [AWS, AZURE], ids=["aws-1-vs-8", "azure-1-vs-2"])
@pytest.mark.parametrize("reverse", [False, True])
def test_the_ranking_keeps_one_gpu_on_a_tie(rows: list[tuple], reverse: bool) -> None:
    offerings = prepare(frame(rows[::-1] if reverse else rows))
    # A job that starts at once: its work alone costs alike (a start, paid at each whole
    # instance's price, would break the tie for the one GPU).
    j = job()
    ranked = plan_job(Workload(j.job, j.table, j.checkpoint_hours, 0.0), offerings).choices
    # A true tie: equal to nine significant digits, and the first has one GPU.
    assert tie_rounded(ranked["expected_cost"].to_numpy()[:2]).tolist() == [
        tie_rounded(ranked["expected_cost"].to_numpy()[:1])[0]] * 2
    assert int(ranked.iloc[0]["gpu_count"]) == 1


@pytest.mark.parametrize("rows", [AWS, AZURE], ids=["aws-1-vs-8", "azure-1-vs-2"])
def test_the_live_policy_keeps_one_gpu_on_a_tie(rows: list[tuple]) -> None:
    resolved = job()
    view = view_from_prices(frame(rows), AT, resolved.table, resolved.job.model)
    for name in ("dynamic", "dynamic-aware", "multi-cloud"):
        choice = make_policy(name, scope=JOB_SCOPE).decide(
            view, JobState(resolved.job, rows[0][1], resolved.job.steps, None))
        assert view.offering(choice).gpu_count == 1, name


@pytest.mark.parametrize("rows", [AWS, AZURE], ids=["aws-1-vs-8", "azure-1-vs-2"])
def test_collection_plans_keep_one_gpu_on_a_tie(rows: list[tuple]) -> None:
    offerings = prepare(frame(rows))
    jobs = [job("a"), job("b")]
    for plan in (plan_collection(jobs, offerings),
                 plan_collection_shared(jobs, offerings)):
        assert plan.feasible
        chosen = offerings.iloc[plan.assignment["offering_index"].to_numpy(dtype=int)]
        assert chosen["gpu_count"].tolist() == [1, 1], plan.policy
        cost = plan.assignment["cost"].to_numpy()
        assert plan.total_cost == pytest.approx(cost.sum())


def test_the_job_spec_decides_the_shape() -> None:
    # A job that allows 8 GPUs only runs on 8 (its gpu_counts), whatever the tie rule says.
    ranked = plan_job(job(counts=(8,)), prepare(frame(AWS))).choices
    assert ranked["gpu_count"].tolist() == [8]


def test_the_tie_rule_is_gpus_then_on_demand_reference_then_key() -> None:
    offerings = frame([("aws", "us-west-2", "b", 1, 3.0), ("aws", "us-east-1", "a", 1, 3.0),
                       ("aws", "us-east-1", "c", 1, 2.0), ("aws", "us-east-1", "d", 2, 1.0)])
    # c: the lowest on-demand reference; then a before b by key (region); d: two GPUs.
    assert tie_order(offerings).tolist() == [2, 1, 0, 3]
    values = np.array([1.0, 1.0 + 1e-12, 1.0, 0.5])
    assert best_of(values, tie_order(offerings)) == 3
    assert best_of(values[:3], tie_order(offerings)[:3]) == 2
