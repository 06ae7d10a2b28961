"""Schema revisions: a store made at the first revision upgrades in place, prices intact."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from sqlalchemy import Engine, inspect, select

from costsched.store import PriceStore, database
from costsched.store.schema import offerings, prices
from price_collectors import recorded

JOB_TABLES = {"jobs", "placements", "job_events", "zone_coverage", "moves", "availability",
              "leases", "task_runs", "spot_availability", "risk_signals",
              "measured_throughputs", "apscheduler_jobs"}


def every_row(engine: Engine) -> dict[str, list[tuple]]:
    """Every row of the price tables, in key order."""
    with engine.connect() as conn:
        return {
            table.name: [tuple(r) for r in conn.execute(
                select(table).order_by(*table.primary_key.columns))]
            for table in (offerings, prices)
        }


def test_a_first_revision_store_upgrades_with_every_row_intact(
    empty_url: str, dispa: Path
) -> None:
    old = PriceStore(empty_url, migrate=False)
    assert old.revision() is None
    database.upgrade(old.engine, "0001")
    assert old.revision() == "0001"
    assert not JOB_TABLES & set(inspect(old.engine).get_table_names())
    parsed = recorded.read_paths([dispa / "aws" / "cost", dispa / "azure"])
    assert parsed.errors == []
    inserted = old.ingest(parsed.observations()).inserted
    before, count = every_row(old.engine), old.count()
    old.dispose()

    store = PriceStore(empty_url)  # opening upgrades in place
    assert store.revision() == database.head() != "0001"
    assert set(inspect(store.engine).get_table_names()) >= JOB_TABLES
    after = every_row(store.engine)
    assert len(after["prices"]) == count == inserted > 15_000
    assert len(after["offerings"]) == len(before["offerings"]) > 0
    assert after == before
    at = datetime(2020, 3, 1, tzinfo=timezone.utc)
    assert store.as_of(at)["usd_per_hour"].notna().all()

    # The new tables work beside the old rows.
    offering = store.offerings(instance_type="p3.2xlarge", market="spot").iloc[0]
    key = tuple(offering[["cloud", "region", "zone", "instance_type", "market", "os"]])
    job_id = store.jobs.create("resnet", {"model": "ResNet-50"}, 1000, at=at)
    price = float(store.as_of(at, instance_type="p3.2xlarge", zone=key[2])["usd_per_hour"]
                  .iloc[0])
    placement = store.jobs.place(job_id, key, gpu_model=offering["gpu_model"],
                                 gpu_count=int(offering["gpu_count"]), at=at,
                                 usd_per_hour=price, reason="launch")
    assert store.jobs.placements(job_id)["id"].tolist() == [placement]
    assert store.jobs.transition(job_id, "running", at=at, expect="pending").state == "running"
    zones = pd.DataFrame([("gcp", "us-central1", "us-central1-a", "a2-highgpu-1g", "spot")],
                         columns=["cloud", "region", "zone", "instance_type", "market"])
    assert store.record_zones(zones, at) == 1
    assert every_row(store.engine) == before
    # A second open is a no-op.
    store.dispose()
    again = PriceStore(empty_url)
    assert again.revision() == database.head()
    assert again.jobs.get(job_id).state == "running"
    again.dispose()


def test_upgrade_to_a_named_revision_is_idempotent(tmp_path: Path) -> None:
    store = PriceStore(str(tmp_path / "p.sqlite"), migrate=False)
    database.upgrade(store.engine, "0001")
    database.upgrade(store.engine, "0001")
    assert database.revision(store.engine) == "0001"
    database.upgrade(store.engine)
    assert database.revision(store.engine) == database.head()
    store.dispose()


def test_a_schedule_a_daemon_made_before_its_revision_is_kept(empty_url: str) -> None:
    """Stores from before the schedule's table was part of the schema have it from
    APScheduler (same layout): the upgrade keeps it and its rows."""
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.background import BackgroundScheduler

    from costsched.store.schema import scheduler_jobs

    old = PriceStore(empty_url, migrate=False)
    database.upgrade(old.engine, "0006")
    scheduler = BackgroundScheduler(timezone="UTC")
    scheduler.add_jobstore(SQLAlchemyJobStore(engine=old.engine, tablename=scheduler_jobs.name))
    scheduler.add_job(print, "interval", hours=1, id="collect")
    scheduler.start(paused=True)
    scheduler.shutdown()
    with old.engine.connect() as conn:
        before = conn.execute(select(scheduler_jobs)).all()
    assert [r.id for r in before] == ["collect"]
    old.dispose()

    store = PriceStore(empty_url)
    assert store.revision() == database.head()
    with store.engine.connect() as conn:
        assert conn.execute(select(scheduler_jobs)).all() == before
    store.dispose()


def test_the_newest_revision_read_without_alembic_is_alembics_head(empty_url: str) -> None:
    from costsched.store_revision import newest_revision

    assert newest_revision() == database.head()
    old = PriceStore(empty_url, migrate=False)
    assert not database._at_head(old.engine)  # no version table yet
    database.upgrade(old.engine, "0001")
    assert not database._at_head(old.engine)  # the quick check leaves it to Alembic
    old.dispose()
    store = PriceStore(empty_url)
    assert store.revision() == database.head() and database._at_head(store.engine)
    store.dispose()
