"""A gang placement charged per node less its node gaps (`JobStore.track_nodes`), on SQLite
and PostgreSQL: the rows path (`charge`, `job_costs`) and the frames path
(`placement_costs`) agree, a price change inside a gap is left out at its own price, and
telling the store the same twice changes nothing."""

from __future__ import annotations

import pytest

from costsched import costs
from costsched.store import PriceStore
from tests.costsched.test_costs import at, new_job, observe

FLEX = ("gcp", "us-central1", "us-central1-a", "a2-highgpu-1g", "flex_start", "linux")


def test_a_gang_is_charged_each_node_for_the_time_it_ran(any_store: PriceStore) -> None:
    observe(any_store, FLEX, [(0, 40.0), (3, 50.0)])  # $40/h per node, $50/h from 3:00
    job = new_job(any_store)
    placement = any_store.jobs.place(job, FLEX, gpu_model="A100", gpu_count=1, at=at(0),
                                     usd_per_hour=80.0, reason="launch", instance="g",
                                     waiting=True)
    # Node 0 runs from 1:00 (seen at 1:10), node 1 waits: charged from 1:00, node 1 not.
    assert any_store.jobs.track_nodes(job, "g", {0: at(1)}, 2, at(1 + 1 / 6)) == placement
    assert any_store.jobs.track_nodes(job, "g", {0: at(1)}, 2, at(1.5)) is None  # the same
    # Node 1 runs from 2:00; lost at 4:00; its replacement runs from 5:30.
    any_store.jobs.track_nodes(job, "g", {0: at(1), 1: at(2)}, 2, at(2.5))
    any_store.jobs.track_nodes(job, "g", {0: at(1)}, 2, at(4))
    any_store.jobs.track_nodes(job, "g", {0: at(1), 1: None}, 2, at(5.5))
    assert any_store.jobs.node_gaps([placement]) == {placement: [
        (1, int(at(1).timestamp()), int(at(2).timestamp())),
        (1, int(at(4).timestamp()), int(at(5.5).timestamp()))]}

    rows = any_store.jobs.placement_rows([job])
    # Node 0: 1:00-7:00 (2 h at $40, 4 h at $50); node 1: 2:00-3:00 at $40, 3:00-4:00
    # and 5:30-7:00 at $50.
    expected = (2 * 40 + 4 * 50) + (40 + 50 + 1.5 * 50)
    [(hours, usd, source)] = costs.charge(any_store, rows, now=at(7), nodes={job: 2})
    assert (hours, usd, source) == (6.0, pytest.approx(expected), "stored")
    # Without the job's nodes: one node over the placement, as before.
    assert costs.charge(any_store, rows, now=at(7))[0][1] == pytest.approx(2 * 40 + 4 * 50)
    cost = costs.job_costs(any_store, [job], now=at(7), checkpoint_gb={job: 0.0},
                           nodes={job: 2})[job]
    assert cost.compute_usd == pytest.approx(expected)
    frame = costs.placement_costs(any_store, any_store.jobs.placements(job), now=at(7),
                                  nodes={job: 2})
    assert frame["usd"].tolist() == [pytest.approx(expected)]
    # A piece of the placement (a report's day): the gaps inside it only.
    piece = any_store.jobs.placements(job).assign(start_at=at(3.5), end_at=at(6))
    assert costs.placement_costs(any_store, piece, now=at(7), nodes={job: 2})[
        "usd"].tolist() == [pytest.approx(2.5 * 50 + 1.0 * 50)]
