"""The price store on SQLite and PostgreSQL: idempotent, transactional, correct as-of."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from costsched.model import InvalidInput, Offering, PriceObservation
from costsched.store import OBSERVATION_COLUMNS, PriceStore, observations_frame
from costsched.store import prices as store_module
from tests.costsched.store.revision_chain import newest_revision


def make_frame(
    n: int, offerings: int = 3, seed: int = 0, start: str = "2020-01-01"
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    which = rng.integers(0, offerings, n)
    seconds = np.sort(rng.choice(86400 * 30, n, replace=False))
    return pd.DataFrame(
        {
            "cloud": "aws",
            "region": "us-east-1",
            "zone": [f"us-east-1{'abcdef'[i % 6]}" for i in which],
            "instance_type": ["p3.2xlarge" if i < 6 else "p2.xlarge" for i in which],
            "market": "spot",
            "os": "linux",
            "gpu_model": ["V100" if i < 6 else "K80" for i in which],
            "gpu_count": 1,
            "vcpus": 8,
            "memory_gb": 61.0,
            "usd_per_hour": np.round(rng.uniform(0.5, 3.0, n), 4),
            "effective_at": pd.Timestamp(start, tz="UTC") + pd.to_timedelta(seconds, unit="s"),
            "source": "test",
        }
    )[OBSERVATION_COLUMNS]


def brute_as_of(frame: pd.DataFrame, at: pd.Timestamp) -> dict[str, float]:
    seen = frame[frame["effective_at"] <= at].sort_values("effective_at")
    return dict(zip(seen["zone"] + "/" + seen["instance_type"], seen["usd_per_hour"],
                    strict=True))


def test_schema_is_at_the_newest_migration(any_store: PriceStore) -> None:
    from costsched.store import database

    assert any_store.revision() == database.head() == newest_revision()
    any_store.upgrade()  # a second upgrade is a no-op
    assert any_store.count() == 0


def test_ingest_is_idempotent(any_store: PriceStore) -> None:
    frame = make_frame(500)
    first = any_store.ingest(frame)
    assert (first.inserted, first.unchanged) == (500, 0)
    again = any_store.ingest(frame)
    assert (again.inserted, again.unchanged) == (0, 500)
    assert any_store.count() == 500


def test_duplicates_within_a_batch_are_stored_once(any_store: PriceStore) -> None:
    frame = make_frame(50)
    result = any_store.ingest(pd.concat([frame, frame]))
    assert result.inserted == 50
    assert any_store.count() == 50


def test_first_stored_observation_wins(any_store: PriceStore) -> None:
    frame = make_frame(10)
    any_store.ingest(frame)
    changed = frame.assign(usd_per_hour=frame["usd_per_hour"] + 1)
    assert any_store.ingest(changed).inserted == 0
    stored = any_store.history().sort_values("effective_at")
    assert np.allclose(stored["usd_per_hour"].to_numpy(),
                       frame.sort_values("effective_at")["usd_per_hour"].to_numpy())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_as_of_matches_brute_force(any_store: PriceStore, seed: int) -> None:
    frame = make_frame(400, offerings=12, seed=seed)
    any_store.ingest(frame)
    rng = np.random.default_rng(seed)
    for offset in rng.integers(-3600, 86400 * 31, 8):
        at = pd.Timestamp("2020-01-01", tz="UTC") + pd.Timedelta(seconds=int(offset))
        got = any_store.as_of(at.to_pydatetime())
        expected = brute_as_of(frame, at)
        assert dict(zip(got["zone"] + "/" + got["instance_type"], got["usd_per_hour"],
                        strict=True)) == expected
        assert (got["effective_at"] <= at).all()


def test_as_of_and_history_filters(any_store: PriceStore) -> None:
    frame = make_frame(300, offerings=12)
    any_store.ingest(frame)
    at = pd.Timestamp("2020-02-15", tz="UTC")
    k80 = any_store.as_of(at, gpu_model=["K80"])
    assert set(k80["instance_type"]) == {"p2.xlarge"}
    assert set(any_store.as_of(at, zone="us-east-1a")["zone"]) == {"us-east-1a"}
    hist = any_store.history(start=pd.Timestamp("2020-01-10", tz="UTC"),
                             end=pd.Timestamp("2020-01-20", tz="UTC"), instance_type="p3.2xlarge")
    expected = frame[(frame["instance_type"] == "p3.2xlarge")
                     & frame["effective_at"].between("2020-01-10", "2020-01-20")]
    assert len(hist) == len(expected) > 0
    assert hist["effective_at"].is_monotonic_increasing or hist["offering_id"].nunique() > 1
    with pytest.raises(InvalidInput, match="unknown filter 'colour'"):
        any_store.as_of(at, colour="red")


def test_a_bad_price_rejects_the_batch_and_keeps_the_store(any_store: PriceStore) -> None:
    any_store.ingest(make_frame(20))
    bad = make_frame(20, seed=9, start="2020-06-01")
    bad.loc[7, "usd_per_hour"] = -1.0
    with pytest.raises(InvalidInput, match="positive"):
        any_store.ingest(bad)
    assert any_store.count() == 20
    assert len(any_store.offerings()) == make_frame(20)["zone"].nunique()


def test_a_crash_mid_batch_leaves_the_store_as_it_was(
    any_store: PriceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    any_store.ingest(make_frame(30))
    before = any_store.history()
    # Several chunks: the crash comes after the first chunk and new offerings were written.
    monkeypatch.setattr(store_module, "_INSERT_CHUNK", 10)
    batch = make_frame(100, offerings=12, seed=5, start="2020-07-01")
    calls = {"n": 0}
    original = PriceStore._insert_prices

    def crash_after_first_chunk(self, conn, rows):  # noqa: ANN001
        original(self, conn, rows.head(10))
        calls["n"] += 1
        raise RuntimeError("power cut")

    monkeypatch.setattr(PriceStore, "_insert_prices", crash_after_first_chunk)
    with pytest.raises(RuntimeError, match="power cut"):
        any_store.ingest(batch)
    assert calls["n"] == 1
    after = any_store.history()
    pd.testing.assert_frame_equal(before, after)
    assert len(any_store.offerings()) == before["offering_id"].nunique()


def test_large_batch_in_several_chunks(any_store: PriceStore, monkeypatch) -> None:
    monkeypatch.setattr(store_module, "_INSERT_CHUNK", 64)
    frame = make_frame(1000, offerings=12)
    assert any_store.ingest(frame).inserted == 1000
    assert any_store.ingest(frame).inserted == 0


def test_observation_objects_round_trip(any_store: PriceStore) -> None:
    offering = Offering("gcp", "us-central1", "", "a2-highgpu-1g", "spot", "A100", 1, 12, 85.0)
    at = pd.Timestamp("2024-06-01T12:00Z").to_pydatetime()
    any_store.ingest([PriceObservation(offering, 1.1, at, "test")])
    got = any_store.as_of(at)
    assert got.loc[0, "instance_type"] == "a2-highgpu-1g"
    assert got.loc[0, "zone"] == ""
    assert got.loc[0, "usd_per_hour"] == 1.1
    assert observations_frame([]).columns.tolist() == OBSERVATION_COLUMNS


def test_invalid_vocabulary_is_refused() -> None:
    with pytest.raises(InvalidInput, match="market 'reserved': expected one of on_demand, spot"):
        Offering("aws", "us-east-1", "", "p3.2xlarge", "reserved", "V100", 1)
    offering = Offering("aws", "us-east-1", "", "p3.2xlarge", "spot", "V100", 1)
    with pytest.raises(InvalidInput, match="positive"):
        PriceObservation(offering, 0.0, pd.Timestamp("2020-01-01T00:00Z").to_pydatetime(), "t")
    with pytest.raises(InvalidInput, match="finite"):
        PriceObservation(offering, float("nan"),
                         pd.Timestamp("2020-01-01T00:00Z").to_pydatetime(), "t")


def test_default_location_and_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("COSTSCHED_DB", str(tmp_path / "x" / "env.sqlite"))
    assert store_module.default_url() == f"sqlite:///{tmp_path / 'x' / 'env.sqlite'}"
    monkeypatch.delenv("COSTSCHED_DB")
    assert store_module.default_url().endswith("costsched/prices.sqlite")
    assert store_module.resolve_url("postgresql://u@h/db") == "postgresql://u@h/db"


def test_migrations_build_exactly_the_declared_schema(any_store: PriceStore) -> None:
    """A schema change without its Alembic migration (or the reverse) fails here."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from costsched.store.schema import metadata

    with any_store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []


def test_spot_markets_are_each_clouds_newest_spot_price_by_then(any_store: PriceStore) -> None:
    """Over every spot offering whatever its GPU, region or os; on-demand prices and prices
    after the time asked do not count."""
    frame = make_frame(40, offerings=8)
    spot_newest = frame["effective_at"].max()
    on_demand = frame.tail(1).assign(market="on_demand", zone="",
                                     effective_at=spot_newest + pd.Timedelta(days=1))
    gcp = frame.head(1).assign(cloud="gcp", region="us-central1", zone="us-central1-a",
                               instance_type="a2-highgpu-1g", gpu_model="A100",
                               effective_at=spot_newest + pd.Timedelta(days=3))
    any_store.ingest(pd.concat([frame, on_demand, gcp], ignore_index=True))
    later = spot_newest + pd.Timedelta(days=2)
    assert any_store.spot_markets(later.to_pydatetime()) == {"aws": spot_newest.to_pydatetime()}
    middle = frame["effective_at"].iloc[19]
    assert any_store.spot_markets(middle.to_pydatetime()) == {"aws": middle.to_pydatetime()}
    assert set(any_store.spot_markets((later + pd.Timedelta(days=2)).to_pydatetime())) == {
        "aws", "gcp"}
    assert any_store.spot_markets(pd.Timestamp("2019-01-01", tz="UTC").to_pydatetime()) == {}


def test_prices_imported_again_as_a_partial_update_are_marked_and_kept(
        any_store: PriceStore) -> None:
    """`mark_partial`: the stored rows a frame repeats (same offering, time and price) get the
    partial update's mark once, leave every spot market, and keep their price and time; a
    row stored with another price, and an offering never stored, are left alone."""
    frame = make_frame(20, offerings=4)
    any_store.ingest(frame)
    newest = frame["effective_at"].max().to_pydatetime()
    assert set(any_store.spot_markets(newest)) == {"aws"}
    other = frame.head(1).assign(usd_per_hour=frame["usd_per_hour"].iloc[0] + 1)
    unknown = frame.head(1).assign(instance_type="p4d.24xlarge")
    again = pd.concat([frame.iloc[1:], other, unknown], ignore_index=True)
    assert any_store.mark_partial(again) == 19
    assert any_store.mark_partial(again) == 0  # marked once
    stored = any_store.history().sort_values("effective_at")
    assert np.allclose(stored["usd_per_hour"].to_numpy(),
                       frame.sort_values("effective_at")["usd_per_hour"].to_numpy())
    first = stored["effective_at"] == frame["effective_at"].iloc[0]
    assert (stored.loc[first, "source"] == "test").all()  # stored with another price
    assert (stored.loc[~first, "source"] == "partial update: test").all()
    assert any_store.spot_markets(newest) == {
        "aws": frame["effective_at"].iloc[0].to_pydatetime()}
    assert any_store.count() == 20
