"""Cost accounting from stored prices, on SQLite and PostgreSQL stores."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import event

from costsched import clouds, costs
from costsched.model import InvalidInput
from costsched.prices import listed_on_demand
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from costsched.store.jobs import PLACEMENT_COLUMNS

T0 = datetime(2024, 6, 1, 12, 0, tzinfo=timezone.utc)
EAST_A = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
EAST_B = ("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "spot", "linux")
WEST = ("aws", "us-west-2", "us-west-2b", "p3.2xlarge", "spot", "linux")
GCP = ("gcp", "us-central1", "", "a2-highgpu-1g", "spot", "linux")
GCP_ZONE_A = ("gcp", "us-central1", "us-central1-a", "a2-highgpu-1g", "spot", "linux")
ON_DEMAND = ("aws", "us-east-1", "", "p3.2xlarge", "on_demand", "linux")
GPU = {"p3.2xlarge": "V100", "a2-highgpu-1g": "A100"}


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def observe(store: PriceStore, key: tuple, prices: list[tuple[float, float]]) -> None:
    """Store (hours after T0, USD/hour) observations of the offering `key`."""
    rows = [(*key[:6], GPU[key[3]], 1, 8, 61.0, usd, pd.Timestamp(at(h)), "test")
            for h, usd in prices]
    store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))


def new_job(store: PriceStore, name: str = "resnet") -> int:
    return store.jobs.create(name, {"name": name}, 1000.0, at=at(-5))


def place(store: PriceStore, job_id: int, key: tuple, hours: float, *,
          usd_per_hour: float = 1.0, reason: str = "launch") -> int:
    return store.jobs.place(job_id, key, gpu_model=GPU[key[3]], gpu_count=1, at=at(hours),
                            usd_per_hour=usd_per_hour, reason=reason)


def charged(store: PriceStore, job_id: int, now: float = 100.0) -> pd.DataFrame:
    return costs.placement_costs(store, store.jobs.placements(job_id), now=at(now))


def test_spot_price_changes_inside_a_placement_are_charged_as_they_changed(
        any_store: PriceStore) -> None:
    observe(any_store, EAST_A, [(-2, 1.0), (1.5, 1.5), (4, 0.8), (8, 2.0)])
    observe(any_store, EAST_B, [(-2, 9.0), (3, 7.0)])  # another zone: not this offering
    job = new_job(any_store)
    place(any_store, job, EAST_A, 0, usd_per_hour=1.0)
    any_store.jobs.end_placement(job, at(6))
    row = charged(any_store, job).iloc[0]
    # 1.5 h at 1.0, 2.5 h at 1.5, 2 h at 0.8
    assert row["usd"] == pytest.approx(1.5 * 1.0 + 2.5 * 1.5 + 2 * 0.8)
    assert row["hours"] == pytest.approx(6.0)
    assert row["price_source"] == "stored"
    assert row["end_at"] == pd.Timestamp(at(6))


def test_a_placement_before_the_first_observation_starts_at_the_first_price(
        any_store: PriceStore) -> None:
    observe(any_store, EAST_A, [(2, 2.0), (3, 3.0)])
    job = new_job(any_store)
    place(any_store, job, EAST_A, 0, usd_per_hour=5.0)
    any_store.jobs.end_placement(job, at(4))
    row = charged(any_store, job).iloc[0]
    assert row["usd"] == pytest.approx(3 * 2.0 + 1 * 3.0)
    assert row["price_source"] == "stored"


def test_a_placement_ending_before_any_observation_takes_the_first_later_one(
        any_store: PriceStore) -> None:
    observe(any_store, EAST_A, [(10, 2.5), (11, 4.0)])
    job = new_job(any_store)
    place(any_store, job, EAST_A, 0, usd_per_hour=1.0)
    any_store.jobs.end_placement(job, at(2))
    row = charged(any_store, job).iloc[0]
    assert row["usd"] == pytest.approx(2 * 2.5)
    assert row["price_source"] == "stored"


def test_an_open_placement_is_charged_to_now(any_store: PriceStore) -> None:
    observe(any_store, EAST_A, [(-1, 1.2), (2, 0.9), (9, 5.0)])
    job = new_job(any_store)
    place(any_store, job, EAST_A, 0)
    row = charged(any_store, job, now=3.5).iloc[0]
    assert pd.isna(row["end_at"])
    assert row["hours"] == pytest.approx(3.5)
    assert row["usd"] == pytest.approx(2 * 1.2 + 1.5 * 0.9)
    later = charged(any_store, job, now=10).iloc[0]
    assert later["usd"] == pytest.approx(2 * 1.2 + 7 * 0.9 + 1 * 5.0)


def test_on_demand_without_stored_prices_is_charged_the_catalog_list_price(
        any_store: PriceStore) -> None:
    job = new_job(any_store)
    place(any_store, job, ON_DEMAND, 0, usd_per_hour=9.99)
    any_store.jobs.end_placement(job, at(3))
    spot = new_job(any_store, "unpriced")  # a spot offering nobody observed
    place(any_store, spot, WEST, 0, usd_per_hour=0.7)
    any_store.jobs.end_placement(spot, at(2))
    listed = listed_on_demand(at(0)).set_index(["cloud", "region", "instance_type"])
    list_price = listed.loc[("aws", "us-east-1", "p3.2xlarge"), "usd_per_hour"]
    frame = costs.placement_costs(any_store, any_store.jobs.placements(), now=at(10))
    by_job = frame.set_index("job_id")
    assert by_job.loc[job, "price_source"] == "catalog"
    assert by_job.loc[job, "usd"] == pytest.approx(3 * list_price)
    assert by_job.loc[spot, "price_source"] == "placement"
    assert by_job.loc[spot, "usd"] == pytest.approx(2 * 0.7)


def test_stored_on_demand_prices_win_over_the_catalog(any_store: PriceStore) -> None:
    observe(any_store, ON_DEMAND, [(-1, 2.0), (1, 2.5)])
    job = new_job(any_store)
    place(any_store, job, ON_DEMAND, 0, usd_per_hour=2.0)
    any_store.jobs.end_placement(job, at(2))
    row = charged(any_store, job).iloc[0]
    assert row["price_source"] == "stored"
    assert row["usd"] == pytest.approx(1 * 2.0 + 1 * 2.5)


def test_a_zoned_placement_is_charged_its_regional_price(any_store: PriceStore) -> None:
    observe(any_store, GCP, [(-1, 1.1), (1, 1.3)])
    job = new_job(any_store)
    place(any_store, job, GCP_ZONE_A, 0, usd_per_hour=1.1)
    any_store.jobs.end_placement(job, at(3))
    row = charged(any_store, job).iloc[0]
    assert row["zone"] == "us-central1-a"
    assert row["price_source"] == "stored"
    assert row["usd"] == pytest.approx(1 * 1.1 + 2 * 1.3)


def test_a_job_across_launch_migration_and_recovery(any_store: PriceStore) -> None:
    observe(any_store, EAST_A, [(-1, 1.0), (2, 1.2), (5, 3.0)])
    observe(any_store, WEST, [(3, 0.9), (6, 0.5)])
    observe(any_store, GCP, [(0, 1.5), (20, 9.0)])
    job = new_job(any_store)
    launch = place(any_store, job, EAST_A, 0, reason="launch")
    moved = place(any_store, job, WEST, 4, usd_per_hour=0.9, reason="migration")
    recovered = place(any_store, job, GCP, 7, usd_per_hour=1.5, reason="recovery")

    cost = costs.job_cost(any_store, job, now=at(9), checkpoint_gb=20.0)

    per = cost.placements.set_index("id")
    assert per.loc[launch, "usd"] == pytest.approx(2 * 1.0 + 2 * 1.2)
    assert per.loc[moved, "usd"] == pytest.approx(2 * 0.9 + 1 * 0.5)
    assert per.loc[recovered, "usd"] == pytest.approx(2 * 1.5)
    assert cost.compute_usd == pytest.approx(per["usd"].sum())
    assert cost.compute_usd == pytest.approx(4.4 + 2.3 + 3.0)

    aws = clouds.egress("aws")
    moves = cost.moves
    assert moves[["from_placement", "to_placement"]].values.tolist() == [
        [launch, moved], [moved, recovered]]
    assert moves["gb"].tolist() == [20.0, 20.0]
    assert moves["usd"].tolist() == pytest.approx(
        [20 * aws.inter_region_usd_per_gb, 20 * aws.internet_usd_per_gb])
    assert (moves["usd"] > 0).all()
    assert cost.egress_usd == pytest.approx(moves["usd"].sum())
    assert per.loc[[launch, moved, recovered], "egress_usd"].tolist() == pytest.approx(
        [0.0, *moves["usd"]])
    assert cost.total_usd == pytest.approx(cost.compute_usd + cost.egress_usd)


def test_egress_is_free_within_a_region_and_only_on_moves() -> None:
    placed = pd.DataFrame({
        "id": [1, 2, 3, 4, 5],
        "job_id": [7, 7, 7, 8, 8],
        "cloud": ["aws", "aws", "aws", "gcp", "aws"],
        "region": ["us-east-1", "us-east-1", "us-west-2", "us-central1", "us-east-1"],
        "start_at": pd.to_datetime([at(0), at(1), at(2), at(0), at(3)], utc=True),
        "reason": ["launch", "recovery", "launch", "launch", "migration"],
    })
    moves = costs.egress_costs(placed, checkpoint_gb={7: 5.0, 8: 10.0})
    # 1 -> 2 in one region: free; 2 -> 3 is a new launch, not a move; 4 -> 5 across clouds.
    assert moves[["job_id", "from_placement", "to_placement"]].values.tolist() == [
        [7, 1, 2], [8, 4, 5]]
    assert moves["usd"].tolist() == pytest.approx(
        [0.0, 10 * clouds.egress("gcp").internet_usd_per_gb])
    with pytest.raises(InvalidInput, match="checkpoint size of job 8"):
        costs.egress_costs(placed, checkpoint_gb={7: 5.0})
    with pytest.raises(InvalidInput, match=r"checkpoint size -1\.0: expected a number"):
        costs.egress_costs(placed, checkpoint_gb=-1.0)


def test_no_placements_give_empty_frames_with_the_columns(any_store: PriceStore) -> None:
    job = new_job(any_store)
    empty = any_store.jobs.placements(job)
    frame = costs.placement_costs(any_store, empty, now=at(1))
    assert frame.empty
    assert list(frame.columns) == [*PLACEMENT_COLUMNS, *costs.COST_COLUMNS]
    moves = costs.egress_costs(empty, checkpoint_gb=1.0)
    assert moves.empty and list(moves.columns) == costs.MOVE_COLUMNS
    cost = costs.job_cost(any_store, job, now=at(1), checkpoint_gb=1.0)
    assert (cost.total_usd, cost.compute_usd, cost.egress_usd) == (0.0, 0.0, 0.0)
    assert cost.placements.empty and cost.moves.empty


def test_bad_input_names_the_value(any_store: PriceStore) -> None:
    with pytest.raises(InvalidInput, match="job 404: no such job"):
        costs.job_cost(any_store, 404, now=at(0), checkpoint_gb=1.0)
    with pytest.raises(InvalidInput, match="placement frame lacks columns: end_at"):
        costs.placement_costs(any_store, pd.DataFrame(columns=["cloud", "region", "zone",
                              "instance_type", "market", "os", "start_at", "usd_per_hour"]),
                              now=at(0))


def test_many_placements_cost_a_few_queries(any_store: PriceStore) -> None:
    keys = [EAST_A, EAST_B, WEST, GCP, ON_DEMAND]
    rng = np.random.default_rng(0)
    for key in keys[:4]:
        observe(any_store, key, [(h, float(p)) for h, p in
                                 zip(range(-2, 30, 3), rng.uniform(0.5, 3, 11), strict=True)])
    for n in range(6):
        job = new_job(any_store, f"job{n}")
        for step, key in enumerate(keys):
            place(any_store, job, key, 5 * step + n, reason="launch" if step == 0 else
                  "migration")
    placed = any_store.jobs.placements()
    queries: list[str] = []

    def count(*args: object) -> None:
        statement = str(args[2])
        if not statement.startswith("BEGIN"):  # SQLite's explicit transactions
            queries.append(statement)

    event.listen(any_store.engine, "before_cursor_execute", count)
    try:
        frame = costs.placement_costs(any_store, placed, now=at(40))
    finally:
        event.remove(any_store.engine, "before_cursor_execute", count)
    assert len(frame) == 30
    assert len(queries) <= 3  # offerings, the price at the first start, the history
    assert set(frame["price_source"]) == {"stored", "catalog"}
    # Each row as charged alone (one placement per call) is the same.
    for i in (0, 7, 29):
        alone = costs.placement_costs(any_store, placed.iloc[[i]], now=at(40))
        assert alone["usd"].iloc[0] == pytest.approx(frame["usd"].iloc[i])


def test_many_jobs_cost_the_same_at_once_as_one_at_a_time(any_store: PriceStore) -> None:
    observe(any_store, EAST_A, [(-1, 1.0), (2, 1.2), (5, 3.0)])
    observe(any_store, WEST, [(3, 0.9), (6, 0.5)])
    observe(any_store, GCP, [(0, 1.5), (20, 9.0)])
    moved, stayed, never, other = (new_job(any_store, n) for n in ("a", "b", "c", "d"))
    place(any_store, moved, EAST_A, 0)
    place(any_store, moved, WEST, 4, usd_per_hour=0.9, reason="migration")
    place(any_store, moved, GCP, 7, usd_per_hour=1.5, reason="recovery")
    place(any_store, stayed, EAST_B, 1, usd_per_hour=2.0)
    place(any_store, other, ON_DEMAND, 2)
    sizes = {moved: 20.0, stayed: 5.0, never: 1.0, other: 0.0}

    together = costs.job_costs(any_store, [moved, stayed, never], now=at(9), checkpoint_gb=sizes)

    assert sorted(together) == sorted([moved, stayed, never])  # only the jobs asked for
    for job in (moved, stayed, never):
        alone = costs.job_cost(any_store, job, now=at(9), checkpoint_gb=sizes[job])
        assert together[job].compute_usd == pytest.approx(alone.compute_usd)
        assert together[job].egress_usd == pytest.approx(alone.egress_usd)
        assert together[job].placements["id"].tolist() == alone.placements["id"].tolist()
    assert together[moved].egress_usd > 0
    assert together[never].total_usd == 0


def test_intervals_on_many_offerings_at_once_equal_a_step_by_step_integral(
        store: PriceStore) -> None:
    """300 intervals on six offerings (one zone charged its region's prices), each with 120
    price changes; some intervals start before an offering's first price or end after its
    last. Charged together, each equals its prices summed one step at a time."""
    rng = np.random.default_rng(3)
    priced = [EAST_A, EAST_B, WEST, GCP, ON_DEMAND]
    steps = {}
    for key in priced:
        hours = np.sort(rng.choice(np.arange(0, 2000), 120, replace=False) / 4.0)
        usd = rng.uniform(0.2, 5.0, 120).round(4)
        observe(store, key, list(zip(hours.tolist(), usd.tolist(), strict=True)))
        steps[key] = (hours * 3600, usd)
    keys = [*priced, GCP_ZONE_A]  # the zone has no prices of its own: its region's
    rows = []
    for n in range(300):
        key = keys[n % len(keys)]
        start = float(rng.uniform(-20, 520))
        rows.append((n, 1, *key, GPU[key[3]], 1, pd.Timestamp(at(start)).floor("s"),
                     pd.Timestamp(at(start + rng.uniform(0, 60))).floor("s"), 9.0,
                     "launch", "", False))
    frame = pd.DataFrame(rows, columns=PLACEMENT_COLUMNS)
    usd = costs.placement_costs(store, frame, now=at(1000))["usd"]

    def by_steps(key: tuple, start: float, end: float) -> float:
        ts, price = steps[GCP if key == GCP_ZONE_A else key]
        total = 0.0
        for i, p in enumerate(price):
            lo = start if i == 0 else max(start, ts[i])
            hi = min(end, ts[i + 1]) if i + 1 < len(ts) else end
            total += p * max(hi - lo, 0.0) / 3600
        return total

    for row, charged_usd in zip(frame.itertuples(), usd, strict=True):
        start, end = ((t - T0).total_seconds() for t in (row.start_at, row.end_at))
        key = (row.cloud, row.region, row.zone, row.instance_type, row.market, row.os)
        assert charged_usd == pytest.approx(by_steps(key, start, end), rel=1e-9, abs=1e-12)
