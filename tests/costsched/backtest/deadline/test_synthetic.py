"""The generative spot availability model: fitted spells and gaps, and its variations."""

from __future__ import annotations

import numpy as np
import pytest

from costsched.backtest.deadline.synthetic import (
    SpotModel,
    Variation,
    _lengths,
    stepped_prices,
)
from costsched.model import InvalidInput
from tests.costsched.backtest.deadline.traces import trace

ZONES = ["us-east-1a", "us-west-2b"]


def _recorded():
    """Zone a: spells of 6 ticks, gaps of 2; zone b: spells of 2, gaps of 6."""
    return trace([("11111100" * 50)[1:], ("11000000" * 50)[3:] + "00"], ZONES)


def test_lengths_leave_out_the_runs_cut_by_the_ends() -> None:
    up, down = _lengths(np.array([1, 1, 0, 0, 0, 1, 0, 1, 1], dtype=bool))
    assert up.tolist() == [1] and down.tolist() == [3, 1]


def test_the_fitted_model_draws_the_recorded_lengths() -> None:
    model = SpotModel.fit(_recorded())
    assert set(model.spells[0].tolist()) == {6} and set(model.gaps[0].tolist()) == {2}
    assert set(model.spells[1].tolist()) == {2} and set(model.gaps[1].tolist()) == {6}
    like = _recorded()
    drawn = model.sample(4000, Variation("fitted"), seed=1, like=like)
    again = model.sample(4000, Variation("fitted"), seed=1, like=like)
    assert (drawn.available == again.available).all()  # a seed gives one trace
    assert drawn.zones == like.zones and drawn.tick == like.tick
    up, down = _lengths(drawn.available[0])
    assert set(up.tolist()) == {6} and set(down.tolist()) == {2}
    assert drawn.available[0].mean() == pytest.approx(0.75, abs=0.02)
    assert drawn.available[1].mean() == pytest.approx(0.25, abs=0.02)
    assert drawn.spot_price[0, 0] == pytest.approx(like.spot_price[0].mean())


def test_variations_shorten_spells_correlate_zones_and_drift() -> None:
    model, like = SpotModel.fit(_recorded()), _recorded()
    short = model.sample(4000, Variation("short", spell_scale=0.5), seed=2, like=like)
    assert set(_lengths(short.available[0])[0].tolist()) == {3}
    base = model.sample(20000, Variation("fitted"), seed=3, like=like)
    both_out = lambda t: (~t.available.any(axis=0)).mean()  # noqa: E731
    shared = model.sample(20000, Variation("shared", shortage_hours=1, shortage_share=1.0),
                          seed=3, like=like)
    # Shortages of a pooled gap (2 or 6 min) about every hour in both zones: both are out
    # about 4 / 64 of the time more.
    assert both_out(shared) - both_out(base) == pytest.approx(4 / 64, abs=0.02)
    drift = model.sample(20000, Variation("drift", drift=0.25), seed=4, like=like)
    first, last = drift.available[0, :5000].mean(), drift.available[0, -5000:].mean()
    assert last < first - 0.2


def test_a_parametric_model_draws_log_normal_spells_of_the_given_medians() -> None:
    model = SpotModel.parametric(("us-east-1a", "us-west-2b"), 60, (2.0, 0.5), (0.5, 2.0),
                                 sigma=0.8, seed=1, draws=2000)
    assert np.median(model.spells[0]) == pytest.approx(120, rel=0.1)  # 2 h in 1-min ticks
    assert np.median(model.gaps[1]) == pytest.approx(120, rel=0.1)
    assert model.available_share[0] > 0.7 > 0.3 > model.available_share[1]
    again = SpotModel.parametric(("us-east-1a", "us-west-2b"), 60, (2.0, 0.5), (0.5, 2.0),
                                 sigma=0.8, seed=1, draws=2000)
    assert all((a == b).all() for a, b in zip(model.spells, again.spells, strict=True))
    with pytest.raises(InvalidInput, match="one spell and one gap median per zone"):
        SpotModel.parametric(("us-east-1a",), 60, (2.0, 1.0), (0.5,), sigma=0.8, seed=1)


def test_a_reliable_zone_turns_scarce_from_the_given_share_of_the_trace_on() -> None:
    model, like = SpotModel.fit(_recorded()), _recorded()
    turned = model.sample(20000, Variation("scarce", scarce_zone=0, scarce_from=0.5,
                                           scarce_spell=0.5, scarce_gap=3.0), seed=5, like=like)
    first, last = turned.available[0, :10000].mean(), turned.available[0, 10000:].mean()
    assert first == pytest.approx(0.75, abs=0.03)  # spells of 6, gaps of 2
    assert last == pytest.approx(3 / (3 + 6), abs=0.03)  # spells of 3, gaps of 6
    assert turned.available[1, 10000:].mean() == pytest.approx(0.25, abs=0.03)  # unchanged


def test_stepped_prices_put_spot_at_a_share_of_on_demand_in_steps() -> None:
    t = stepped_prices(_recorded(), [0.25, 0.5])
    half = -(-t.ticks // 2)  # the first tick of the second step
    assert (t.spot_price[:, :half] == t.on_demand_price[:, :half] * 0.25).all()
    assert (t.spot_price[:, half:] == t.on_demand_price[:, half:] * 0.5).all()
    assert "25%-50% of on-demand in 2 steps" in t.price_source
    with pytest.raises(InvalidInput, match="shares of the on-demand price"):
        stepped_prices(_recorded(), [0.0, 1.2])
