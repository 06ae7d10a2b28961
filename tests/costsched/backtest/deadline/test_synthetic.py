"""The generative spot availability model: fitted spells and gaps, and its variations."""

from __future__ import annotations

import numpy as np
import pytest

from costsched.backtest.deadline.synthetic import SpotModel, Variation, _lengths
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
