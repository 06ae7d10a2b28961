"""Availability traces: from arrays and stored intervals, runs, padding, prices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from costsched.backtest.deadline import REFERENCE_SPOT_SHARE, AvailabilityTrace
from costsched.model import InvalidInput
from tests.costsched.backtest.deadline.traces import intervals, trace


def test_intervals_give_back_the_ticks() -> None:
    t = trace(["0011101", "1100011"], ["us-east-1a", "us-west-2b"], 195)
    again = AvailabilityTrace.from_intervals(intervals(t))
    assert again.tick == 195
    assert again.zones == t.zones and again.regions == ("us-east-1", "us-west-2")
    assert (again.available == t.available).all()
    assert again.start == t.start


def test_runs_before_and_after_each_tick() -> None:
    t = trace(["0111011"], ["us-east-1a"])
    assert t.run_before[0].tolist() == [0, 1, 2, 3, 0, 1, 2]
    assert t.run_after[0].tolist() == [0, 3, 2, 1, 0, 2, 1]


def test_padding_adds_ticks_without_spot_at_the_last_prices() -> None:
    t = trace(["11"], ["us-east-1a"]).padded(5)
    assert t.available[0].tolist() == [True, True, False, False, False]
    assert (t.spot_price[0] == t.spot_price[0, 0]).all()


def test_reference_prices_come_from_the_catalog() -> None:
    t = AvailabilityTrace.from_arrays(np.ones((1, 3)), ["us-east-1a"], 195)
    from costsched import catalog

    listed = catalog.on_demand_prices()
    price = listed[(listed["instance_type"] == "p3.2xlarge")
                   & (listed["region"] == "us-east-1")]["usd_per_hour"].iloc[0]
    assert t.on_demand_price[0, 0] == pytest.approx(price)
    assert t.spot_price[0, 0] == pytest.approx(price * REFERENCE_SPOT_SHARE)


def test_stored_prices_replace_the_reference_from_their_time_on(store) -> None:
    from costsched.model import Offering, PriceObservation

    t = trace(["1111"], ["us-east-1a"], 3600)
    store.spot_availability.add(intervals(t))
    offering = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)
    store.ingest([PriceObservation(offering, 1.5, (t.start + pd.Timedelta(hours=2))
                                   .to_pydatetime(), "test")])
    priced = AvailabilityTrace.from_store(store, zones=["us-east-1a"], tick=3600)
    reference = priced.on_demand_price[0, 0] * REFERENCE_SPOT_SHARE
    assert priced.spot_price[0].tolist() == pytest.approx([reference, reference, 1.5, 1.5])
    assert "stored prices" in priced.price_source


def test_bad_input_names_the_value() -> None:
    with pytest.raises(InvalidInput, match="zone 'nowhere'"):
        AvailabilityTrace.from_arrays(np.ones((1, 2)), ["nowhere"], 60)
    with pytest.raises(InvalidInput, match="tick 0"):
        AvailabilityTrace.from_arrays(np.ones((1, 2)), ["us-east-1a"], 0)
    with pytest.raises(InvalidInput, match="spot_price"):
        AvailabilityTrace.from_arrays(np.ones((1, 2)), ["us-east-1a"], 60, spot_price=-1)
