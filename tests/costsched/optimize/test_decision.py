"""The decision model: spot risk against a simulation, per-offering rates, overheads, move
costs, and agreement between the planner's ranking
and the policies for one job when no move is involved."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

from costsched import clouds
from costsched.jobspec import parse, resolve
from costsched.optimize.decision import (
    Overheads,
    egress_per_gb,
    expected_hours,
    move_cost,
    offering_rates,
)
from costsched.optimize.hazard import PRIOR_HOURS
from costsched.optimize.planner import plan_job, prepare
from costsched.optimize.rank import tie_rounded
from costsched.policies import JobState, make_policy, view_from_prices
from costsched.prices import prices_at
from costsched.store import OFFERING_KEY
from costsched.throughput import ThroughputTable


def test_default_overheads_restart_and_move() -> None:
    o = Overheads()
    assert o.restart_hours(0.0) == pytest.approx((10 + 5) / 60)
    # 4.5 GB at 1 Gbit/s: 36 s of copy.
    assert o.restart_hours(4.5) == pytest.approx(15 / 60 + 36 / 3600)
    # Lost work: half the job's checkpoint interval (the old 15 minutes at 30 minutes).
    assert o.move_idle_hours(0.0, 0.5) == pytest.approx(30 / 60)
    assert o.move_idle_hours(0.0, 2.0) == pytest.approx(15 / 60 + 1.0)
    fixed = Overheads(lost_work_minutes=6.0, transfer_gbps=8.0)
    assert fixed.move_idle_hours(1.0, 2.0) == pytest.approx(21 / 60 + 1 / 3600)
    assert fixed.egress_gb(3.0) == 3.0


def test_free_overheads_make_every_move_free() -> None:
    free = Overheads.free()
    assert free.restart_hours(50.0) == 0.0 and free.move_idle_hours(50.0, 4.0) == 0.0
    assert free.egress_gb(50.0) == 0.0 and free.overlap_hours == 0.0
    offerings = pd.DataFrame({"cloud": ["aws", "azure"], "region": ["us-east-1", "eastus"]})
    to = egress_per_gb(offerings["cloud"], offerings["region"], 0)
    cost = move_cost(free, np.array([2.0, 3.0]), 0, to, 50.0, 4.0)
    assert cost.tolist() == [0.0, 0.0]


OFFERINGS = pd.DataFrame({
    "cloud": ["aws", "aws", "aws", "azure", "azure"],
    "region": ["us-east-1", "us-east-1", "us-west-2", "eastus", "westus2"],
})


def test_egress_free_within_a_region_inter_region_within_a_cloud_internet_across() -> None:
    aws, azure = clouds.egress("aws"), clouds.egress("azure")
    from_aws = egress_per_gb(OFFERINGS["cloud"], OFFERINGS["region"], 0)
    assert from_aws.tolist() == [0.0, 0.0, aws.inter_region_usd_per_gb,
                                 aws.internet_usd_per_gb, aws.internet_usd_per_gb]
    matrix = egress_per_gb(OFFERINGS["cloud"], OFFERINGS["region"])
    np.testing.assert_array_equal(matrix[0], from_aws)
    # The source cloud's prices: leaving Azure is billed at Azure's rates.
    assert matrix[3].tolist() == [azure.internet_usd_per_gb] * 3 + [
        0.0, azure.inter_region_usd_per_gb]
    assert aws.inter_region_usd_per_gb < aws.internet_usd_per_gb


def test_move_cost_is_idle_on_the_new_overlap_on_the_old_and_egress() -> None:
    o = Overheads(overlap_minutes=12.0)
    prices = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    gb, interval = 10.0, 1.0
    to = egress_per_gb(OFFERINGS["cloud"], OFFERINGS["region"], 1)
    cost = move_cost(o, prices, 1, to, gb, interval)
    idle = o.move_idle_hours(gb, interval)
    egress = to * gb
    np.testing.assert_allclose(cost, idle * prices + 0.2 * prices[1] + egress)
    assert cost[0] < cost[2] < cost[3]  # same region < other region < other cloud (here)


AT = datetime(2020, 3, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("policy", ["static", "gpu-type", "multi-gpu", "multi-cloud",
                                    "dynamic", "dynamic-aware"])
@pytest.mark.parametrize(("model", "interval", "restart"), [
    ("ResNet-50 (batch size 128)", 30, 10), ("A3C", 10, 0),
    ("Transformer (batch size 256)", 240, 10), ("LM (batch size 80)", 30, 30),
])
def test_planner_best_is_the_policy_choice_for_a_fresh_job(
        recorded_store, policy: str, model: str, interval: float, restart: float) -> None:
    """Over the same prices and the same allowed offerings, with no move to pay for."""
    spec = parse({"name": "j", "model": model, "steps": 3e6,
                  "checkpoint": {"interval_minutes": interval, "restart_minutes": restart}})
    job = resolve(spec, ThroughputTable(), AT)
    frame = prices_at(recorded_store, AT, os="linux")
    view = view_from_prices(frame, AT, job.table, job.job.model)
    state = JobState(job.job, "us-east-1", job.job.steps, None,
                     Overheads(restart_minutes=restart))
    chosen = make_policy(policy).decide(view, state)
    # The planner over the offerings the policy may choose from (in the same key order).
    allowed = make_policy(policy).candidates(view, state)
    offered = prepare(view.offerings[allowed])
    ranked = plan_job(job, offered).choices
    assert not ranked.empty
    # The policy prices the job's steps (its rest); the plan counts its first start too,
    # at each offering's price: without it, the two agree.
    rest = ranked["expected_cost"] - ranked["start_cost"]
    best = ranked.iloc[int(tie_rounded(rest.to_numpy()).argmin())]
    assert tuple(best[OFFERING_KEY]) == chosen
    assert math.isfinite(best["expected_cost"])


def simulate(work: float, rate: float, tau: float, restart: float, runs: int,
             rng: np.random.Generator) -> float:
    """Run the job: segments of tau hours of work; a preemption loses the segment's progress
    and costs `restart` hours before running again."""
    total = np.zeros(runs)
    remaining = np.full(runs, work)
    while (remaining > 1e-12).any():
        active = remaining > 1e-12
        seg = np.minimum(tau, remaining[active])
        t_fail = rng.exponential(1 / rate, size=seg.shape)
        done = t_fail >= seg
        spent = np.where(done, seg, t_fail + restart)
        idx = np.flatnonzero(active)
        total[idx] += spent
        remaining[idx[done]] -= seg[done]
    return float(total.mean())


@pytest.mark.parametrize(("work", "rate", "tau", "restart"), [
    (10.0, 0.1, 0.5, 0.1),
    (7.3, 0.6, 1.0, 0.25),  # GCP-like rate, a partial last segment
    (3.0, 2.0, 0.25, 0.0),
])
def test_expected_hours_matches_simulation(work: float, rate: float, tau: float,
                                           restart: float) -> None:
    rng = np.random.default_rng(42)
    simulated = simulate(work, rate, tau, restart, runs=40_000, rng=rng)
    assert float(expected_hours(work, rate, tau, restart)) == pytest.approx(simulated, rel=0.01)


def test_no_preemption_means_no_overhead() -> None:
    assert expected_hours(12.5, 0.0, 0.5, 1.0) == pytest.approx(12.5)
    assert expected_hours(12.5, 1e-9, 0.5, 1.0) == pytest.approx(12.5)


def test_more_risk_or_rarer_checkpoints_take_longer() -> None:
    rates = np.array([0.0, 0.05, 0.2, 1.0])
    hours = expected_hours(10.0, rates, 0.5, 0.1)
    assert np.all(np.diff(hours) > 0)
    taus = np.array([0.1, 0.5, 2.0])
    assert np.all(np.diff(expected_hours(10.0, 0.3, taus, 0.0)) > 0)


def test_offering_rates_default_measured_and_on_demand() -> None:
    frame = pd.DataFrame({
        "cloud": ["aws", "aws", "gcp", "aws"],
        "region": ["us-east-1", "us-east-1", "us-west1", "us-east-1"],
        "gpu_model": ["K80", "V100", "V100", "K80"],
        "gpu_count": [1, 1, 1, 1],
        "market": ["spot", "spot", "spot", "on_demand"],
    })
    measured = pd.DataFrame({"cloud": ["aws"], "region": ["us-east-1"], "gpu_model": ["K80"],
                             "gpu_count": [1], "preemptions": [23], "hours": [97.3]})
    out = offering_rates(frame, measured)
    aws = clouds.default_preemption("aws").per_hour
    expected_k80 = (23 + aws * PRIOR_HOURS) / (97.3 + PRIOR_HOURS)
    # The V100 has no data of its own: the cloud's K80 data (relative risk theta against
    # the default) is its prior evidence; GCP saw nothing.
    a = aws * PRIOR_HOURS
    theta_cloud = (23 + a) / (aws * 97.3 + a)
    assert out["preemptions_per_hour"].tolist() == pytest.approx(
        [expected_k80, aws * theta_cloud, clouds.default_preemption("gcp").per_hour, 0.0])
    assert out["preemption_basis"].tolist() == [
        "measured in region: 23 in 97 h; prior aws default",
        "pooled from cloud: 23 in 97 h; prior aws default", "gcp default", "on-demand"]


def test_egress_by_region_pair_and_cloud_free_between_zones() -> None:
    from costsched.optimize.decision import Place, egress_usd_per_gb

    east1c = Place("aws", "us-east-1", "us-east-1c")
    east1d = Place("aws", "us-east-1", "us-east-1d")
    east2b = Place("aws", "us-east-2", "us-east-2b")
    west2a = Place("aws", "us-west-2", "us-west-2a")
    # AWS's listed pair rates: us-east-1 -> us-east-2 $0.01/GB, -> us-west-2 $0.02/GB.
    assert egress_usd_per_gb(east1c, east2b) == 0.01
    assert egress_usd_per_gb(east1c, west2a) == 0.02
    assert egress_usd_per_gb(east1c, east1c) == 0.0
    # Within a region the copy goes through the region's object storage: not billed.
    assert egress_usd_per_gb(east1c, east1d) == 0.0
    assert egress_usd_per_gb(east1c, Place("aws", "us-east-1")) == 0.0  # zone unknown
    assert egress_usd_per_gb(Place("gcp", "us-central1", "us-central1-a"),
                             Place("gcp", "us-central1", "us-central1-b")) == 0.0
    assert egress_usd_per_gb(east1c, Place("gcp", "us-central1")) == 0.09
    # A pair AWS does not list: the cloud's inter-region rate.
    assert egress_usd_per_gb(Place("aws", "xx-none-1"), west2a) == 0.02
    matrix = egress_per_gb(["aws"] * 3, ["us-east-1", "us-east-1", "us-east-2"],
                           zone=["us-east-1c", "us-east-1d", "us-east-2b"])
    assert matrix.tolist() == [[0.0, 0.0, 0.01], [0.0, 0.0, 0.01], [0.01, 0.01, 0.0]]


def test_move_price_is_itemised_and_its_total_is_move_cost() -> None:
    from costsched.optimize.decision import Place, move_price, price_move

    o = Overheads(overlap_minutes=12.0, lost_work_minutes=6.0)
    prices = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    to = egress_per_gb(OFFERINGS["cloud"], OFFERINGS["region"], 1)
    price = move_price(o, prices, 1, to, 50.0, 1.0)
    np.testing.assert_allclose(price.egress_usd, to * 50.0)
    np.testing.assert_allclose(price.restart_usd, o.restart_hours(50.0) * prices)
    np.testing.assert_allclose(price.lost_work_usd, 0.1 * prices)
    np.testing.assert_allclose(price.overlap_usd, 0.2 * 2.0)
    np.testing.assert_allclose(price.total, move_cost(o, prices, 1, to, 50.0, 1.0))
    # Measured lost work replaces the assumption.
    measured = move_price(o, prices, 1, to, 50.0, 1.0, lost_work_hours=0.5)
    np.testing.assert_allclose(measured.lost_work_usd, 0.5 * prices)
    # A 50 GB checkpoint from us-east-1 to us-west-2: $1.00 of egress, once.
    one = price_move(Overheads(), Place("aws", "us-east-1", "us-east-1c"),
                     Place("aws", "us-west-2", "us-west-2a"), 1.0, 1.5, 50.0, 0.5,
                     lost_work_hours=0.0)
    assert one.egress_usd == pytest.approx(1.0)
    assert one.restart_usd == pytest.approx(Overheads().restart_hours(50.0) * 1.5)
    assert one.lost_work_usd == 0.0 and one.overlap_usd == 0.0
    assert one.as_dict()["total_usd"] == pytest.approx(one.total)
