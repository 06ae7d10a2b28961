"""Run charges moves with the decision model's overheads; no NaN when the old offering has
no price; a replay reads the user's throughputs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from costsched.backtest import BacktestConfig, BacktestJob, run_backtest
from costsched.backtest.accounting import Run
from costsched.model import Job
from costsched.optimize.decision import Overheads
from costsched.throughput import ThroughputTable, save_user
from tests.costsched.backtest.handmade import (
    AZ_V100,
    DAY,
    K80_A,
    T0,
    V100_A,
    V100_B,
    WEST_V100,
    trace,
)

H = 3600


def key_row(tr, offering: tuple) -> int:  # noqa: ANN001
    cloud, region, zone, itype, _, _ = offering
    return tr.rows[(cloud, region, zone, itype, "spot", "linux")]


def test_a_move_is_charged_idle_hours_from_the_job_interval_and_egress() -> None:
    tr = trace([(V100_A, 1.0, 0), (AZ_V100, 2.0, 0)])
    a, z = key_row(tr, V100_A), key_row(tr, AZ_V100)
    overheads = Overheads(overlap_minutes=30)
    run = Run(tr, np.array([1.0, 1.0]), 1e9, int(T0.timestamp()), 86_400, overheads,
              checkpoint_gb=10.0, checkpoint_hours=3.0)
    out = run.advance(0, np.array([a]), np.array([z]), np.array([1e9]))
    idle = overheads.move_idle_hours(10.0, 3.0)
    assert idle == pytest.approx(15 / 60 + 80 / 3600 + 1.5)  # lost work: half of 3 h
    egress = tr.egress_per_gb[a, z] * 10.0
    assert egress > 0
    assert out.migration_usd[0] == pytest.approx(idle * 2.0 + 0.5 * 1.0 + egress)
    assert out.steps[0] == pytest.approx((24 - idle) * H)


def test_a_move_is_charged_egress_between_regions_not_between_zones() -> None:
    # The bill's price of the copy, as a running job's decider prices the move: through the
    # region's object storage a zone change is free; us-east-1 -> us-west-2 is $0.02/GB.
    tr = trace([(V100_A, 1.0, 0), (V100_B, 1.0, 0), (K80_A, 1.0, 0), (WEST_V100, 1.0, 0)])
    a, b, k, w = (key_row(tr, o) for o in (V100_A, V100_B, K80_A, WEST_V100))
    run = Run(tr, np.ones(4), 1e9, int(T0.timestamp()), 86_400, Overheads(),
              checkpoint_gb=50.0)
    out = run.advance(0, np.array([a, a, a]), np.array([b, k, w]), np.full(3, 1e9))
    idle_usd = run.idle_hours * 1.0
    assert out.migration_usd.tolist() == pytest.approx([idle_usd, idle_usd,
                                                        idle_usd + 50 * 0.02])


def test_the_replay_prices_a_copy_as_a_running_jobs_decider_does() -> None:
    tr = trace([(V100_A, 1.0, 0), (V100_B, 1.0, 0), (K80_A, 1.0, 0), (AZ_V100, 1.0, 0),
                (WEST_V100, 1.0, 0)])
    live = replace(tr.view(int(T0.timestamp()), np.ones(len(tr.keys))), egress=None)
    for row in range(len(tr.keys)):
        np.testing.assert_array_equal(tr.egress_per_gb[row], live.egress_from(row))


def test_overlap_on_an_offering_without_a_price_is_not_nan() -> None:
    # K80 is first priced on day 1: at day 0 it has no price to charge the overlap at.
    tr = trace([(V100_A, 1.0, 0), (K80_A, 0.5, 1)])
    k, v = key_row(tr, K80_A), key_row(tr, V100_A)
    run = Run(tr, np.array([1.0, 1.0]), 1e9, int(T0.timestamp()), 86_400,
              Overheads(overlap_minutes=60), checkpoint_gb=1.0)
    out = run.advance(0, np.array([k]), np.array([v]), np.array([1e9]))
    assert np.isfinite(out.usd).all() and np.isfinite(out.migration_usd).all()
    assert out.migration_usd[0] == pytest.approx(run.idle_hours * 1.0)


def test_without_a_table_a_replay_reads_the_users_measurements(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    # The bundled table makes a V100 cheaper per step for A3C than a K80 at these prices;
    # the user measured a K80 three times as fast, which turns it round.
    tr = trace([(V100_A, 1.0, 0), (K80_A, 0.6, 0)])
    bundled = ThroughputTable()
    assert 0.6 / bundled.get("A3C", "K80", 1).steps_per_second > 1.0 / bundled.get(
        "A3C", "V100", 1).steps_per_second
    path = tmp_path / "throughputs.csv"
    fast = 3 * bundled.get("A3C", "K80", 1).steps_per_second
    save_user(pd.DataFrame([{"model": "A3C", "gpu_model": "K80", "gpu_count": 1,
                             "steps_per_second": fast, "source": "test"}]), path)
    monkeypatch.setenv("COSTSCHED_THROUGHPUTS", str(path))
    steps = 86_400 * bundled.get("A3C", "V100", 1).steps_per_second
    bj = BacktestJob(Job("a3c", "", "A3C", steps), "us-east-1", 1.0)
    start = [T0.to_pydatetime()]
    mine = run_backtest(tr, [bj], start, ["gpu-type"], BacktestConfig())
    theirs = run_backtest(tr, [bj], start, ["gpu-type"], BacktestConfig(), bundled)
    assert "p2.xlarge" in mine["first_offering"].iloc[0]
    assert "p3.2xlarge" in theirs["first_offering"].iloc[0]


@pytest.mark.parametrize("start_day", [-1, 0, 2])
def test_advance_one_is_advance_to_the_last_bit(start_day: int) -> None:
    # Replays charge with the scalar form, the oracle with the array form: a plan must
    # cost the same either way, so the two must agree exactly, moves and finishes too.
    tr = trace([(V100_A, 1.0, 0), (AZ_V100, 2.0, 0.5), (K80_A, 0.7, 1), (V100_A, 1.3, 2.25),
                (AZ_V100, 0.9, 3.1)])
    rows = [key_row(tr, o) for o in (V100_A, AZ_V100, K80_A)]
    run = Run(tr, np.array([1.0, 2.5, 0.75]), 4e5, int((T0 + start_day * DAY).timestamp()),
              86_400, Overheads(overlap_minutes=20), checkpoint_gb=3.0, checkpoint_hours=2.0)
    cases = [(k, prev, new, left) for k in range(4) for prev in [-1, *rows] for new in rows
             for left in (1.0, 5e4, 86_000.0, 2e5, 4e5)]
    prev, new, left = (np.array(c) for c in list(zip(*cases, strict=True))[1:])
    for i, (k, *_) in enumerate(cases):
        want = run.advance(k, prev[i:i + 1], new[i:i + 1], left[i:i + 1])
        got = run.advance_one(k, int(prev[i]), int(new[i]), float(left[i]))
        assert got == tuple(float(getattr(want, f)[0]) if f not in ("finished", "migrated")
                            else bool(getattr(want, f)[0]) for f in got._fields), cases[i]
