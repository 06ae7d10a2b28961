"""dynamic-aware: the next period at today's prices, the rest at the past week's."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from costsched.backtest import BacktestConfig, PriceTrace, run_backtest, throughputs
from costsched.model import Job
from costsched.optimize.decision import Overheads
from costsched.policies import JobState, make_policy
from costsched.policies.dynamic_aware import _later_moves
from costsched.throughput import ThroughputTable
from tests.costsched.backtest.handmade import K80_A, T0, V100_A, V100_B, free_but_idle, job, trace
from tests.costsched.backtest.handmade import one as replay_one

TABLE = ThroughputTable()
RESNET = "ResNet-50 (batch size 128)"


def sps(gpu: str) -> float:
    return TABLE.get(RESNET, gpu, 1).steps_per_second


def test_waits_out_a_price_spike_on_a_slow_cheap_gpu() -> None:
    # A week at 1 $/h, then one day at 2 $/h. During the spike a K80 costs 1.8x A's usual
    # price per step (dearer than B's 1.5x), but makes few steps: the job parks there for
    # the day and comes back, where dynamic (today's prices for the whole job) moves to B.
    ratio = sps("K80") / sps("V100")
    k80 = 1.8 * ratio
    assert 24 * k80 * (1 - 1 / 1.8) < 24 * 0.5  # parking is the cheaper way through
    rows = [(V100_A, 1.0, 0), (V100_A, 2.0, 8), (V100_A, 1.0, 9), (V100_B, 1.5, 0),
            (K80_A, k80, 0)]
    bj = job(RESNET, 3, TABLE)
    start = (T0 + timedelta(days=8)).to_pydatetime()
    aware = _run(rows, bj, "dynamic-aware", start)
    dynamic = _run(rows, bj, "dynamic", start)
    assert aware["first_offering"].startswith("aws:us-east-1a:p2.xlarge")
    assert aware["last_offering"].startswith("aws:us-east-1a:p3.2xlarge")
    assert aware["cost_usd"] == pytest.approx(24 * k80 + (72 - 24 * ratio) * 1.0)
    assert dynamic["first_offering"].startswith("aws:us-east-1b:p3.2xlarge")
    assert dynamic["cost_usd"] == pytest.approx(24 * 1.5 + 48 * 1.0)
    assert aware["cost_usd"] < dynamic["cost_usd"]


def _run(rows, bj, policy: str, start: datetime):  # noqa: ANN001, ANN202
    config = BacktestConfig(overheads=Overheads.free(), margin=0.0)
    frame = run_backtest(trace(rows), [bj], [start], [policy], config, TABLE)
    row = frame.iloc[0]
    assert row["error"] is None, row["error"]
    return row


def test_a_move_that_would_not_outlast_the_spike_is_not_made() -> None:
    # Placed on A before the spike; moving for one dear day to B and back costs two moves
    # of idle time, more than the day's saving: dynamic-aware stays, dynamic moves.
    rows = [(V100_A, 1.0, 0), (V100_A, 1.4, 1), (V100_A, 1.0, 2), (V100_B, 1.2, 0)]
    bj = job(RESNET, 3, TABLE)
    costs = free_but_idle(3.0)
    aware = replay_one(trace(rows), bj, "dynamic-aware", costs=costs, table=TABLE, margin=0.0)
    dynamic = replay_one(trace(rows), bj, "dynamic", costs=costs, table=TABLE)
    assert aware["migrations"] == 0 and dynamic["migrations"] > 0
    assert aware["cost_usd"] == pytest.approx(24 * 1.0 + 24 * 1.4 + 24 * 1.0)
    assert aware["cost_usd"] < dynamic["cost_usd"]


def test_a_long_job_leaves_a_dearer_offering_once_a_period_saving_beats_the_margin() -> None:
    # A rises from 1.0 to 1.1 $/h after the first day and stays there; B holds at 1.0. The
    # first day's saving of moving (24 x 0.1 less the half-hour idle on B) beats 5% of the
    # day's cost on A, so the job moves then, however much of it is left.
    rows = [(V100_A, 1.0, 0), (V100_A, 1.1, 1), (V100_B, 1.0, 0)]
    bj = job(RESNET, 10, TABLE)
    aware = replay_one(trace(rows), bj, "dynamic-aware", costs=free_but_idle(0.5), table=TABLE,
                       margin=0.05)
    assert aware["migrations"] == 1
    assert aware["last_offering"].startswith("aws:us-east-1b:p3.2xlarge")
    assert aware["cost_usd"] == pytest.approx(24 * 1.0 + (9 * 24 + 0.5) * 1.0)


@pytest.fixture(scope="module")
def recorded(recorded_store) -> PriceTrace:
    return PriceTrace.from_store(recorded_store, os=["linux", "linux-vpc"])


@pytest.mark.parametrize("model", ["A3C", "Transformer (batch size 256)", "LM (batch size 80)"])
def test_without_history_free_moves_and_no_margin_it_decides_as_dynamic(
        recorded: PriceTrace, model: str) -> None:
    """Today's prices as the forecast and free moves: finishing on the cheapest offering
    per step is best whatever the next period runs on, so the choice is dynamic's."""
    rates = throughputs(recorded, TABLE, model)
    job_ = Job(model, "", model, 3e6)
    aware, dynamic = make_policy("dynamic-aware", margin=0.0), make_policy("dynamic")
    checked = moved = 0
    for hours in range(0, 30 * 24, 37):
        t = datetime(2020, 2, 10, tzinfo=timezone.utc) + timedelta(hours=hours)
        view = recorded.view(int(t.timestamp()), rates)
        earlier = recorded.view(int((t - timedelta(days=3)).timestamp()), rates)
        for region in ("us-east-1", "us-west-2"):
            fresh = JobState(job_, region, job_.steps, None, Overheads.free())
            placed = dynamic.decide(earlier, fresh)
            for current in (None, placed):
                state = JobState(job_, region, job_.steps / 2, current, Overheads.free())
                choice = aware.decide(view, state)
                assert choice == dynamic.decide(view, state), (t, region, current)
                checked += 1
                moved += current is not None and choice != current
    assert checked >= 80 and moved > 0


def test_later_moves_are_priced_by_region_pair_live_as_in_a_replay() -> None:
    # Live the view carries no egress matrix and the policy prices moves after the next
    # period itself: by cloud and region pair, as a replay's trace does.
    tr = trace([(V100_A, 1.0, 0), (V100_B, 1.0, 0), (K80_A, 0.5, 0)])
    bj = job(RESNET, 3, TABLE)
    state = JobState(replace(bj.job, checkpoint_gb=50.0), bj.region, bj.job.steps, None,
                     Overheads())
    replayed = tr.view(int(T0.timestamp()), throughputs(tr, TABLE, RESNET))
    live = replace(replayed, egress=None, derived={})
    rows = np.arange(len(tr.keys))
    _, in_replay = _later_moves(replayed, rows, state)
    _, asked_live = _later_moves(live, rows, state)
    np.testing.assert_allclose(asked_live, in_replay)
    a, b = tr.rows[(*V100_A[:4], "spot", "linux")], tr.rows[(*V100_B[:4], "spot", "linux")]
    idle = Overheads().move_idle_hours(50.0, bj.job.checkpoint_hours)
    assert in_replay[a, b] == pytest.approx(idle * 1.0)  # between zones: no egress
