"""cheapest-hourly on hand-made traces: the lowest USD/hour of the asked-for accelerator
anywhere the job allows, kept, and picked again when its offering is gone."""

from __future__ import annotations

from dataclasses import replace

import pytest

from costsched.backtest import throughputs
from costsched.model import Constraints
from costsched.optimize.decision import Overheads
from costsched.policies import JobState, make_policy
from costsched.throughput import ThroughputTable
from tests.costsched.backtest.handmade import (
    AZ_V100,
    K80_A,
    T0,
    V100_A,
    V100X4_A,
    WEST_V100,
    job,
    one,
    trace,
)

TABLE = ThroughputTable()
RESNET, A3C = "ResNet-50 (batch size 128)", "A3C"


def sps(model: str, gpu: str, count: int = 1) -> float:
    return TABLE.get(model, gpu, count).steps_per_second


def test_it_takes_the_lowest_hourly_v100_in_any_cloud_and_region() -> None:
    # A K80 is cheaper per hour and the 4xV100 per GPU, but the default ask is 1xV100.
    tr = trace([(V100_A, 1.0, 0), (WEST_V100, 0.8, 0), (AZ_V100, 0.9, 0), (K80_A, 0.1, 0),
                (V100X4_A, 2.0, 0)])
    row = one(tr, job(RESNET, 2, TABLE), "cheapest-hourly", table=TABLE)
    assert row["first_offering"].startswith("aws:us-west-2a:p3.2xlarge")
    assert row["cost_usd"] == pytest.approx(48 * 0.8)
    # static stays in the home region.
    assert one(tr, job(RESNET, 2, TABLE), "static", table=TABLE)["cost_usd"] == pytest.approx(48)


def test_it_ignores_throughput_among_the_accelerators_the_job_allows() -> None:
    # A3C on a K80 costs more per step than on a V100, but the K80 is cheaper per hour.
    tr = trace([(V100_A, 1.0, 0), (K80_A, 0.6, 0)])
    assert 0.6 / sps(A3C, "K80") > 1.0 / sps(A3C, "V100")
    bj = job(A3C, 1, TABLE)
    bj = replace(bj, job=replace(bj.job, constraints=Constraints(gpu_models=("K80", "V100"))))
    row = one(tr, bj, "cheapest-hourly", table=TABLE)
    hours = 24 * sps(A3C, "V100") / sps(A3C, "K80")
    assert row["first_offering"].startswith("aws:us-east-1a:p2.xlarge")
    assert row["hours"] == pytest.approx(hours)
    assert row["cost_usd"] == pytest.approx(0.6 * hours)
    assert one(tr, bj, "gpu-type", table=TABLE)["cost_usd"] == pytest.approx(24.0)


def test_the_asked_for_gpu_count_is_kept() -> None:
    tr = trace([(V100_A, 1.0, 0), (V100X4_A, 3.0, 0)])
    bj = job(RESNET, 2, TABLE)
    bj = replace(bj, job=replace(bj.job, constraints=Constraints(gpu_counts=(4,))))
    row = one(tr, bj, "cheapest-hourly", table=TABLE)
    assert row["first_offering"].startswith("aws:us-east-1a:p3.8xlarge")
    hours = 48 * sps(RESNET, "V100") / sps(RESNET, "V100", 4)
    assert row["cost_usd"] == pytest.approx(3.0 * hours)


def test_it_keeps_its_choice_when_prices_move() -> None:
    tr = trace([(V100_A, 1.0, 0), (WEST_V100, 0.8, 0), (WEST_V100, 5.0, 1)])
    row = one(tr, job(RESNET, 2, TABLE), "cheapest-hourly", table=TABLE)
    assert row["migrations"] == 0
    assert row["cost_usd"] == pytest.approx(24 * 0.8 + 24 * 5.0)


def test_it_moves_to_the_then_cheapest_when_its_offering_is_withdrawn() -> None:
    # A NaN price is an offering gone from the market (no capacity, retired type).
    tr = trace([(V100_A, 1.5, 0), (WEST_V100, 0.8, 0), (AZ_V100, 2.0, 0), (V100_A, 1.2, 0.5),
                (WEST_V100, float("nan"), 1)])
    row = one(tr, job(RESNET, 3, TABLE), "cheapest-hourly", table=TABLE)
    assert row["migrations"] == 1
    assert row["last_offering"].startswith("aws:us-east-1a:p3.2xlarge")
    assert row["cost_usd"] == pytest.approx(24 * 0.8 + 48 * 1.2)


def test_a_relaunch_after_a_preemption_takes_the_then_cheapest() -> None:
    tr = trace([(V100_A, 1.0, 0), (WEST_V100, 0.8, 0), (WEST_V100, 1.4, 1)])
    policy = make_policy("cheapest-hourly")
    bj = job(RESNET, 2, TABLE)
    rates = throughputs(tr, TABLE, RESNET)
    view = tr.view(int(T0.timestamp()) + 30 * 3600, rates)
    west, east = tr.keys[tr.rows[WEST_KEY]], tr.keys[tr.rows[EAST_KEY]]
    placed = JobState(bj.job, "us-east-1", bj.job.steps, west, Overheads())
    assert policy.decide(view, placed) == west  # kept while it runs
    preempted = replace(placed, current=None)  # asked again for the relaunch
    assert policy.decide(view, preempted) == east


def test_shares_of_multi_gpu_instances_are_not_its_choice() -> None:
    tr = trace([(V100_A, 1.0, 0), (V100X4_A, 2.0, 0)]).shared()
    bj = job(RESNET, 1, TABLE)
    assert one(tr, bj, "cheapest-hourly", table=TABLE)["cost_usd"] == pytest.approx(24.0)
    row = one(tr, bj, "dynamic", table=TABLE)
    assert row["first_offering"].startswith("aws:us-east-1a:p3.8xlarge[1/4]")
    assert row["cost_usd"] == pytest.approx(24 * 2.0 / 4)


EAST_KEY = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
WEST_KEY = ("aws", "us-west-2", "us-west-2a", "p3.2xlarge", "spot", "linux")
