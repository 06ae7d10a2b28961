"""Costs charged on plain rows (what `status` charges without pandas): the cases a frame
handled by its shape, each checked against the frames built around the same rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from costsched import costs
from costsched.optimize.decision import Place, egress_usd_per_gb
from costsched.store import PriceStore
from costsched.store.job_rows import PlacementRow
from tests.costsched.test_costs import (
    EAST_A,
    EAST_B,
    GCP,
    ON_DEMAND,
    WEST,
    at,
    new_job,
    observe,
    place,
)


def _row(job_id: int, key: tuple, start: float, end: float | None, usd_per_hour: float,
         placement_id: int = 1, reason: str = "launch", waiting: bool = False
         ) -> PlacementRow:
    return PlacementRow(placement_id, job_id, *key, "V100", 1, at(start),
                        None if end is None else at(end), usd_per_hour, reason, "", waiting)


def test_a_nan_price_without_history_is_nan_and_counts_nothing_in_the_job(
        any_store: PriceStore) -> None:
    """A placement price that is not a number, on an offering with no stored or catalog
    price: its row says NaN (nothing made up) and its job's total counts it as 0."""
    job = new_job(any_store)
    rows = [_row(job, EAST_A, 0, 2, math.nan, 1), _row(job, EAST_B, 2, 3, 1.5, 2,
                                                           "migration")]
    [(hours, usd, source), second] = costs.charge(any_store, rows, now=at(9))
    assert (hours, source) == (2.0, "placement") and math.isnan(usd)
    assert second == (1.0, 1.5, "placement")
    cost = costs.job_costs(any_store, [job], now=at(9), checkpoint_gb={job: 0.0},
                           placements=rows)[job]
    assert cost.compute_usd == 1.5
    assert math.isnan(cost.placements["usd"].iloc[0])  # the frame says the same


def test_before_the_first_observation_and_after_the_last_on_rows(
        any_store: PriceStore) -> None:
    observe(any_store, EAST_A, [(4, 2.0), (6, 3.0)])
    job = new_job(any_store)
    rows = [_row(job, EAST_A, 0, 5, 9.0, 1), _row(job, EAST_A, 7, 8, 9.0, 2, "recovery")]
    charged = costs.charge(any_store, rows, now=at(9))
    # The first price before the first observation; the last one after the last.
    assert charged[0] == (5.0, pytest.approx(4 * 2.0 + 1 * 2.0), "stored")
    assert charged[1] == (1.0, pytest.approx(3.0), "stored")


def test_a_waiting_flex_start_placement_costs_nothing_until_its_instance_runs(
        any_store: PriceStore) -> None:
    observe(any_store, EAST_A, [(-1, 2.0)])
    job = new_job(any_store)
    any_store.jobs.transition(job, "running", at=at(0))
    any_store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(0),
                         usd_per_hour=2.0, reason="launch", instance="i-1", waiting=True)
    waiting = costs.job_cost(any_store, job, now=at(3), checkpoint_gb=1.0)
    assert (waiting.total_usd, waiting.charged[0].hours) == (0.0, 0.0)
    any_store.jobs.runs(job, "i-1", at(1))
    running = costs.job_cost(any_store, job, now=at(3), checkpoint_gb=1.0)
    assert running.charged[0].hours == 2.0
    assert running.total_usd == pytest.approx(4.0)


def test_every_node_of_a_multi_node_job_is_charged_and_its_checkpoint_copied_once(
        any_store: PriceStore) -> None:
    observe(any_store, EAST_A, [(-1, 1.0)])
    observe(any_store, WEST, [(-1, 0.5)])
    job = new_job(any_store)
    place(any_store, job, EAST_A, 0)
    place(any_store, job, WEST, 2, reason="migration")
    one = costs.job_costs(any_store, [job], now=at(4), checkpoint_gb={job: 10.0})[job]
    four = costs.job_costs(any_store, [job], now=at(4), checkpoint_gb={job: 10.0},
                           nodes={job: 4})[job]
    assert four.compute_usd == pytest.approx(4 * one.compute_usd)
    assert four.egress_usd == one.egress_usd > 0
    assert [c.nodes for c in four.charged] == [4, 4]
    assert four.placements["nodes"].tolist() == [4, 4]


def test_egress_on_rows_is_charged_on_each_move_into_the_placement_it_moved_to(
        any_store: PriceStore) -> None:
    job = new_job(any_store)
    first = place(any_store, job, EAST_A, 0)
    same_region = place(any_store, job, EAST_B, 1, reason="recovery")
    other_region = place(any_store, job, WEST, 2, reason="migration")
    other_cloud = place(any_store, job, GCP, 3, reason="recovery")
    cost = costs.job_cost(any_store, job, now=at(4), checkpoint_gb=20.0)
    assert [(m.from_placement, m.to_placement) for m in cost.moved] == [
        (first, same_region), (same_region, other_region), (other_region, other_cloud)]
    expected = [20.0 * egress_usd_per_gb(Place(a[0], a[1]), Place(b[0], b[1]))
                for a, b in ((EAST_A, EAST_B), (EAST_B, WEST), (WEST, GCP))]
    assert [m.usd for m in cost.moved] == expected
    assert expected[0] == 0.0 < expected[1] < expected[2]  # free within a region
    assert [c.egress_usd for c in cost.charged] == [0.0, *expected]
    assert cost.egress_usd == sum(expected)
    # The frames built from the rows say the same.
    assert cost.moves["usd"].tolist() == expected
    assert cost.placements["egress_usd"].tolist() == [0.0, *expected]


def test_rows_and_frames_charge_the_same_to_the_last_bit(any_store: PriceStore) -> None:
    """A job of twelve placements (numpy sums more than eight numbers pairwise): its total
    on rows is the sum of its frame's column, bit for bit, and each row is the frame's."""
    rng = np.random.default_rng(7)
    for key in (EAST_A, WEST, GCP):
        observe(any_store, key, [(h, float(p)) for h, p in
                                 zip(range(-3, 40, 2), rng.uniform(0.3, 4, 22), strict=True)])
    job = new_job(any_store)
    keys = [EAST_A, WEST, GCP, ON_DEMAND]
    for n in range(12):
        place(any_store, job, keys[n % 4], 3 * n + float(rng.uniform(0, 2)),
              reason="launch" if n == 0 else "migration")
    cost = costs.job_cost(any_store, job, now=at(40), checkpoint_gb=3.0)
    frame = costs.placement_costs(any_store, any_store.jobs.placements(job), now=at(40))
    assert [c.usd for c in cost.charged] == frame["usd"].tolist()
    assert [c.hours for c in cost.charged] == frame["hours"].tolist()
    assert [c.price_source for c in cost.charged] == frame["price_source"].tolist()
    assert cost.compute_usd == float(frame["usd"].to_numpy().sum())
    assert set(frame["price_source"]) == {"stored", "catalog"}
