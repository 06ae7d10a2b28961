"""Each policy on hand-made traces where the right answer is worked out by hand."""

from __future__ import annotations

import pytest

from costsched.model import InvalidInput
from costsched.policies import POLICIES, make_policy, policy_name
from costsched.throughput import ThroughputTable
from tests.costsched.backtest.handmade import (
    AZ_V100,
    K80_A,
    V100_A,
    V100_B,
    V100X4_A,
    WEST_V100,
    free_but_idle,
    job,
    one,
    trace,
)

TABLE = ThroughputTable()
RESNET, A3C, LM = "ResNet-50 (batch size 128)", "A3C", "LM (batch size 80)"


def sps(model: str, gpu: str, count: int = 1) -> float:
    return TABLE.get(model, gpu, count).steps_per_second


def test_static_takes_the_cheapest_v100_at_the_start_and_keeps_it() -> None:
    tr = trace([(V100_A, 1.0, 0), (V100_B, 0.9, 0), (V100_B, 5.0, 1), (K80_A, 0.01, 0)])
    row = one(tr, job(RESNET, 2, TABLE), "static", table=TABLE)
    assert row["first_offering"].startswith("aws:us-east-1b:p3.2xlarge")
    assert row["cost_usd"] == pytest.approx(24 * 0.9 + 24 * 5.0)
    assert row["hours"] == pytest.approx(48) and row["migrations"] == 0


def test_gpu_type_picks_the_best_throughput_per_dollar_among_single_gpus() -> None:
    # A3C: a K80 at 0.3 $/h beats a V100 at 1 $/h per step; the 4xV100 is out of scope.
    tr = trace([(V100_A, 1.0, 0), (K80_A, 0.3, 0), (V100X4_A, 0.5, 0)])
    assert 0.3 / sps(A3C, "K80") < 1.0 / sps(A3C, "V100")
    row = one(tr, job(A3C, 1, TABLE), "gpu-type", table=TABLE)
    hours = 24 * sps(A3C, "V100") / sps(A3C, "K80")
    assert row["first_offering"].startswith("aws:us-east-1a:p2.xlarge")
    assert row["hours"] == pytest.approx(hours)
    assert row["cost_usd"] == pytest.approx(0.3 * hours)


def test_multi_gpu_compares_instances_per_step_at_their_gpu_count() -> None:
    tr = trace([(V100_A, 1.0, 0), (V100X4_A, 2.0, 0)])
    assert 2.0 / sps(LM, "V100", 4) < 1.0 / sps(LM, "V100")
    bj = job(LM, 1, TABLE)
    assert one(tr, bj, "gpu-type", table=TABLE)["cost_usd"] == pytest.approx(24.0)
    row = one(tr, bj, "multi-gpu", table=TABLE)
    hours = 24 * sps(LM, "V100") / sps(LM, "V100", 4)
    assert row["first_offering"].startswith("aws:us-east-1a:p3.8xlarge")
    assert row["cost_usd"] == pytest.approx(2.0 * hours)


def test_multi_cloud_adds_other_clouds_but_not_other_regions_of_the_home_cloud() -> None:
    tr = trace([(V100_A, 1.0, 0), (AZ_V100, 0.5, 0), (WEST_V100, 0.1, 0)])
    bj = job(RESNET, 1, TABLE)
    assert one(tr, bj, "multi-gpu", table=TABLE)["cost_usd"] == pytest.approx(24.0)
    row = one(tr, bj, "multi-cloud", table=TABLE)
    assert row["first_offering"].startswith("azure:eastus:Standard_NC6s_v3")
    assert row["cost_usd"] == pytest.approx(12.0)


def test_choose_once_policies_do_not_follow_later_prices() -> None:
    tr = trace([(V100_A, 1.0, 0), (V100_A, 9.0, 1), (AZ_V100, 1.5, 0)])
    row = one(tr, job(RESNET, 2, TABLE), "multi-cloud", table=TABLE)
    assert row["cost_usd"] == pytest.approx(24 + 24 * 9.0) and row["migrations"] == 0


def test_dynamic_moves_every_period_to_the_cheapest_and_pays_for_it() -> None:
    tr = trace([(V100_A, 1.0, 0), (V100_A, 3.0, 1), (V100_B, 2.0, 0)])
    bj = job(RESNET, 2, TABLE)
    free = one(tr, bj, "dynamic", table=TABLE)
    assert free["cost_usd"] == pytest.approx(24 * 1.0 + 24 * 2.0) and free["migrations"] == 1
    # One idle hour per move: day 1 does 23 h of work on B, the last hour runs on day 2.
    charged = one(tr, bj, "dynamic", costs=free_but_idle(1.0), table=TABLE)
    assert charged["cost_usd"] == pytest.approx(24 + 24 * 2.0 + 1 * 2.0)
    assert charged["migration_usd"] == pytest.approx(2.0)
    assert charged["hours"] == pytest.approx(49)


def test_dynamic_aware_moves_only_when_the_saving_beats_the_move() -> None:
    bj = job(RESNET, 2, TABLE)
    costs = free_but_idle(1.0)
    big = trace([(V100_A, 1.0, 0), (V100_A, 3.0, 1), (V100_B, 2.0, 0)])
    # Day 1: staying costs 24 h x $3 = 72; moving 24 h x $2 + 1 idle h x $2 = 50.
    moved = one(big, bj, "dynamic-aware", costs=costs, table=TABLE)
    assert moved["migrations"] == 1 and moved["cost_usd"] == pytest.approx(74.0)
    small = trace([(V100_A, 1.0, 0), (V100_A, 3.0, 1), (V100_B, 2.95, 0)])
    # Moving would cost 24 x 2.95 + 2.95 = 73.75 > 72: stay. Naive dynamic moves and loses.
    stayed = one(small, bj, "dynamic-aware", costs=costs, table=TABLE)
    assert stayed["migrations"] == 0 and stayed["cost_usd"] == pytest.approx(24 + 72)
    naive = one(small, bj, "dynamic", costs=costs, table=TABLE)
    assert naive["cost_usd"] == pytest.approx(24 + 24 * 2.95 + 2.95)


def test_dynamic_aware_margin_holds_back_small_savings() -> None:
    bj = job(RESNET, 2, TABLE)
    tr = trace([(V100_A, 1.0, 0), (V100_A, 3.0, 1), (V100_B, 2.8, 0)])
    # Free moves save 24 x 0.2 = 4.8 on day 1: 6.7% of the 72 it costs to stay.
    assert one(tr, bj, "dynamic-aware", margin=0.05, table=TABLE)["migrations"] == 1
    assert one(tr, bj, "dynamic-aware", margin=0.10, table=TABLE)["migrations"] == 0


def test_oracle_sees_that_a_short_price_spike_is_not_worth_two_moves() -> None:
    # A: $1, $1.5 on day 1, $1 again; B: $1.4. Six idle hours per move. 3 V100-days.
    tr = trace([(V100_A, 1.0, 0), (V100_A, 1.5, 1), (V100_A, 1.0, 2), (V100_B, 1.4, 0)])
    bj = job(RESNET, 3, TABLE)
    costs = free_but_idle(6.0)
    dynamic = one(tr, bj, "dynamic", costs=costs, table=TABLE)
    # d0 A 24; d1 B 33.6 (18 h work); d2 back to A 24 (18 h work); d3 12 h on A.
    assert dynamic["cost_usd"] == pytest.approx(24 + 33.6 + 24 + 12)
    assert dynamic["migrations"] == 2
    oracle = one(tr, bj, "oracle", costs=costs, table=TABLE)
    assert oracle["cost_usd"] == pytest.approx(24 + 36 + 24) and oracle["migrations"] == 0
    aware = one(tr, bj, "dynamic-aware", costs=costs, table=TABLE)
    assert aware["cost_usd"] == pytest.approx(84.0)


def test_oracle_moves_when_the_future_pays_for_it() -> None:
    # The naive rule keeps A on day 1 (equal price); the oracle knows A triples on day 2
    # and moves early, while moving is still cheap.
    tr = trace([(V100_A, 1.0, 0), (V100_A, 6.0, 2), (V100_B, 1.0, 0), (V100_B, 1.2, 1)])
    bj = job(RESNET, 3, TABLE)
    oracle = one(tr, bj, "oracle", costs=free_but_idle(1.0), table=TABLE)
    dynamic = one(tr, bj, "dynamic", costs=free_but_idle(1.0), table=TABLE)
    # Oracle: A on days 0-1 (48), B on day 2 (1 idle h + 24 work h... ends day 3 at 1 h).
    assert oracle["cost_usd"] == pytest.approx(48 + 24 * 1.2 + 1 * 1.2)
    assert oracle["cost_usd"] <= dynamic["cost_usd"] + 1e-9


def test_no_offering_in_scope_is_reported_not_raised() -> None:
    tr = trace([(K80_A, 0.3, 0)])
    from costsched.backtest import BacktestConfig, run_backtest
    from tests.costsched.backtest.handmade import T0

    frame = run_backtest(tr, [job(RESNET, 1, TABLE)], [T0.to_pydatetime()], ["static"],
                         BacktestConfig(), TABLE)
    assert frame["cost_usd"].isna().all()
    assert "no offering in its scope" in frame["error"].iloc[0]


def test_policy_names_and_aliases() -> None:
    assert policy_name("+gpu-type") == "gpu-type" and policy_name("dynamic_aware") in POLICIES
    assert make_policy("dynamic-aware", margin=0.2).margin == 0.2
    with pytest.raises(InvalidInput, match="expected one of static"):
        policy_name("cheapest")


def test_a_decision_is_an_offering_key_that_the_view_turns_into_an_offering() -> None:
    import numpy as np

    from costsched.model import Job
    from costsched.policies.base import JobState
    from tests.costsched.backtest.handmade import T0

    tr = trace([(V100_A, 1.0, 0), (V100_B, 0.8, 0)])
    view = tr.view(int(T0.timestamp()), np.array([2.846, 2.846]))
    state = JobState(Job("j", "", RESNET, 1e5), "us-east-1", 1e5, None)
    key = make_policy("static").decide(view, state)
    assert key == ("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "spot", "linux")
    offering = view.offering(key)
    assert offering.zone == "us-east-1b" and offering.gpu_model == "V100"
