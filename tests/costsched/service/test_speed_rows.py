"""A job's measured speed on the store's rows (`measured.speed_rows`, what `status` and
the daemon's reconcile compute without pandas) gives the figures and flags the frame
computation gave before it (kept below, as it was, as the reference), on stores of every
shape a speed has, on SQLite and PostgreSQL: trained on one GPU, moved to a GPU it has not
trained on long enough, stored before readings were kept (on one GPU and on two), ended
before it trained long enough, still measuring, and flagged slow."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import update

from costsched import measured
from costsched.measured import (
    MEASURING,
    MIN_TRAINING_SECONDS,
    SETUP_SECONDS,
    SPEED_COLUMNS,
    Rate,
    rate_or_nan,
    speed_rows,
    speeds,
    stored_readings,
)
from costsched.service import jobs as service
from costsched.service import speeds as speed_service
from costsched.store import PriceStore
from costsched.store.job_rows import placement_frame
from costsched.store.jobs import readings_frame
from costsched.store.schema import placements as placements_table

NOW = datetime(2026, 11, 29, 9, tzinfo=timezone.utc)
V100 = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
T4 = ("aws", "us-east-1", "us-east-1a", "g4dn.xlarge", "spot", "linux")
PLANNED = {"V100": 10.0, "T4": 4.0}  # steps/s each job's spec declares


def _job(store: PriceStore, name: str, start: datetime) -> int:
    spec = {"name": name, "throughputs": PLANNED, "steps": 1_000_000, "run": "true"}
    job = store.jobs.create(name, {"spec": spec, "source": f"{name}.yaml"}, 1_000_000,
                            at=start)
    store.jobs.transition(job, "running", at=start)
    return job


def _place(store: PriceStore, job: int, key: tuple, gpu: str, at: datetime) -> None:
    store.jobs.place(job, key, gpu_model=gpu, gpu_count=1, at=at, usd_per_hour=1.0,
                     reason="launch", instance=f"i-{job}-{gpu}-{at:%H%M%S}")


def _steps(store: PriceStore, job: int, start: datetime, *readings: tuple[float, float]) -> None:
    """The job's steps, read `seconds` after `start`: (seconds, step) each."""
    for seconds, step in readings:
        store.jobs.record_step(job, step, at=start + timedelta(seconds=seconds))


def _forget_readings(store: PriceStore, job: int) -> None:
    """The job's placements as stored before readings were kept."""
    with store.engine.begin() as conn:
        conn.execute(update(placements_table).where(placements_table.c.job_id == job).values(
            first_step=None, first_step_ts=None, last_step=None, last_step_ts=None))


def _world(store: PriceStore) -> dict[str, int]:
    """One job of each shape (see the module), by name."""
    t0 = NOW - timedelta(hours=3)
    jobs = {}
    jobs["steady"] = j = _job(store, "steady", t0)
    _place(store, j, V100, "V100", t0)  # 10 min of setup, then 10 steps/s
    _steps(store, j, t0, (600, 5), (630, 305), (660, 605))
    jobs["moved"] = j = _job(store, "moved", t0)
    _place(store, j, V100, "V100", t0)
    _steps(store, j, t0, (300, 10), (3600, 33_010))
    store.jobs.end_placement(j, t0 + timedelta(hours=1))
    _place(store, j, T4, "T4", t0 + timedelta(hours=1))  # on the T4 for 5 s of training
    _steps(store, j, t0 + timedelta(hours=1), (400, 33_020), (405, 33_040))
    jobs["old"] = j = _job(store, "old", t0)
    _place(store, j, V100, "V100", t0)
    _steps(store, j, t0, (3600, 18_000))  # read an hour in: 5 steps/s over all it ran
    _forget_readings(store, j)
    jobs["old-two"] = j = _job(store, "old-two", t0)
    _place(store, j, V100, "V100", t0)
    store.jobs.end_placement(j, t0 + timedelta(hours=1))
    _place(store, j, T4, "T4", t0 + timedelta(hours=1))
    _steps(store, j, t0, (7200, 30_000))
    store.jobs.end_placement(j, t0 + timedelta(hours=2))
    _forget_readings(store, j)
    jobs["short"] = j = _job(store, "short", t0)
    _place(store, j, V100, "V100", t0)  # ended after 2 minutes, 3 s of training read
    _steps(store, j, t0, (100, 2), (103, 4))
    store.jobs.end_placement(j, t0 + timedelta(minutes=2))
    store.jobs.transition(j, "succeeded", at=t0 + timedelta(minutes=2))
    jobs["short-fast"] = j = _job(store, "short-fast", t0)
    _place(store, j, V100, "V100", t0)  # as short, and faster than planned over all it ran
    _steps(store, j, t0, (100, 2_000), (103, 2_030))
    store.jobs.end_placement(j, t0 + timedelta(minutes=2))
    store.jobs.transition(j, "succeeded", at=t0 + timedelta(minutes=2))
    jobs["measuring"] = j = _job(store, "measuring", t0)
    _place(store, j, V100, "V100", NOW - timedelta(minutes=5))
    _steps(store, j, NOW - timedelta(minutes=5), (200, 1), (200 + MIN_TRAINING_SECONDS / 2, 40))
    jobs["slow"] = j = _job(store, "slow", t0)
    _place(store, j, V100, "V100", t0)
    _steps(store, j, t0, (60, 100), (660, 1_900))  # 3 steps/s, planned 10
    return jobs


@pytest.fixture()
def world(any_store: PriceStore) -> tuple[PriceStore, dict[str, int]]:
    return any_store, _world(any_store)


def _inputs(store: PriceStore) -> tuple:
    """What a speed is computed from: every job's placements (rows, frame), steps, times
    of reading, rates (the declared figures) and readings (rows, frame)."""
    records = store.jobs.records()
    rates = {r.id: lambda gpu, count: PLANNED[gpu] * count for r in records}
    rows = store.jobs.placement_rows(None)
    read = store.jobs.reading_rows(None)
    done = {r.id: r.steps_done for r in records}
    read_at = {r.id: r.updated_at for r in records}
    return rows, placement_frame(rows), done, read_at, rates, read, readings_frame(read)


def _same(found: list, expected: pd.DataFrame) -> None:
    assert len(found) == len(expected)
    for row, want in zip(found, expected.itertuples(index=False), strict=True):
        assert (row.job_id, row.gpu_model, row.gpu_count, row.measuring) == \
            (int(want.job_id), want.gpu_model, int(want.gpu_count), bool(want.measuring))
        for field in ("hours", "planned_sps", "measured_sps"):
            got, wanted = getattr(row, field), float(getattr(want, field))
            assert (math.isnan(got) and math.isnan(wanted)) or \
                got == pytest.approx(wanted, rel=1e-12), (row, want)


def test_the_rows_give_every_speed_the_frames_gave(world) -> None:
    store, jobs = world
    rows, frame, done, read_at, rates, read, read_frame = _inputs(store)
    before = old_speeds(frame, done, {j: pd.Timestamp(t) for j, t in read_at.items()}, rates,
                        readings=read_frame)
    now = speed_rows(rows, done, read_at, rates, stored_readings(read))
    _same(now, before)
    _same(list(measured._rows(speeds(frame, done, read_at, rates, readings=read_frame))),
          before)  # the frame path is the row path, made a frame
    # The shapes differ where they should: the test covers each.
    by_job = measured.job_speeds(now)
    assert by_job[jobs["steady"]][0].measured_sps == pytest.approx(10.0)
    moved = {s.gpu_model: s for s in by_job[jobs["moved"]]}
    assert moved["T4"].measured_sps == pytest.approx(moved["V100"].measured_sps * 4 / 10)
    assert by_job[jobs["old"]][0].measured_sps == pytest.approx(5.0)
    assert len(by_job[jobs["old-two"]]) == 2
    assert measured.measuring(by_job[jobs["short"]])  # slower over a setup's minutes: unjudged
    assert not measured.measuring(by_job[jobs["short-fast"]])  # faster stands
    assert measured.measuring(by_job[jobs["measuring"]])
    assert by_job[jobs["slow"]][0].measured_sps == pytest.approx(3.0)
    assert SETUP_SECONDS > 120


def test_status_flags_the_jobs_the_frames_flagged(world, monkeypatch) -> None:
    """`status`'s flags from its rows, and the same flags with the speeds computed by the
    frame computation of before."""
    store, jobs = world
    shown = service.status(store, None, at=NOW, reconcile_first=False)
    found = speed_service.status_flags(shown)

    def before(placed, done, read_at, rates, readings=()):  # noqa: ANN001, ANN202
        frame = old_speeds(placement_frame(placed), done,
                           {j: pd.Timestamp(t) for j, t in read_at.items()}, rates,
                           readings=readings_frame(readings) if readings else None)
        return measured._rows(frame)

    monkeypatch.setattr(speed_service, "speed_rows", before)
    assert speed_service.status_flags(shown) == found
    assert found[jobs["slow"]].startswith("measured 3 steps/s on 1xV100, 3.33x slower")
    assert found[jobs["measuring"]] == MEASURING
    assert jobs["steady"] not in found and jobs["short"] not in found


# --- the frame computation as it was, the reference ----------------------------------------


def old_speeds(placements: pd.DataFrame, steps_done: Mapping[int, float],
               read_at: Mapping[int, pd.Timestamp], rates: Mapping[int, Rate | None],
               readings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per job and GPU (model, count) it ran on: the hours it trained there (see the
    module), the speed its table gives (`planned_sps`) and the speed it made
    (`measured_sps`, NaN when it reported no step, or while `measuring`). `placements`:
    the jobs' placement frame (id, job_id, gpu_model, gpu_count, start_at, end_at; end NaT
    while open); `readings`: their step readings (`JobStore.readings`). A job without
    readings is measured over its placements' hours up to the reading of its step
    (`read_at`)."""
    if placements.empty:
        return pd.DataFrame(columns=SPEED_COLUMNS)
    read = set() if readings is None or readings.empty else set(readings["job_id"])
    if read:
        trained = _old_trained(placements[placements["job_id"].isin(read)], readings, rates)
        live = set(placements.loc[placements["end_at"].isna(), "job_id"])
        short = set(trained.loc[trained["measuring"], "job_id"]) - live
        trained = trained[~trained["job_id"].isin(short)]
        rest = placements[~placements["job_id"].isin(read - short)]
        if rest.empty:
            return trained
        over_all = old_speeds(rest, steps_done, read_at, rates)
        return pd.concat([trained, _old_bounded(over_all, short)], ignore_index=True)
    reading = placements["job_id"].map(lambda j: read_at.get(int(j)))
    reading = pd.to_datetime(reading, utc=True)
    end = placements["end_at"].fillna(reading)
    end = end.where(end < reading, reading)
    seconds = np.maximum((end - placements["start_at"]).dt.total_seconds().fillna(0.0), 0.0)
    frame = placements[["job_id", "gpu_model", "gpu_count"]].assign(hours=seconds / 3600)
    frame = frame.groupby(["job_id", "gpu_model", "gpu_count"], as_index=False,
                          sort=False)["hours"].sum()
    frame["planned_sps"] = [rate_or_nan(rates.get(int(j)), g, c) for j, g, c in zip(
        frame["job_id"], frame["gpu_model"], frame["gpu_count"], strict=True)]
    measured = np.full(len(frame), np.nan)
    all_hours, all_planned = frame["hours"].to_numpy(), frame["planned_sps"].to_numpy()
    for job_id, rows in frame.groupby("job_id").indices.items():
        steps = float(steps_done.get(int(job_id), 0.0))
        hours, planned = all_hours[rows], all_planned[rows]
        if steps <= 0 or hours.sum() <= 0:
            continue
        ran = hours > 0
        if ran.sum() == 1:  # one GPU: measured exactly; others it met after the reading
            here = steps / (hours[ran][0] * 3600)  # by the table's ratio
            measured[rows] = here * planned / planned[ran][0]
            measured[rows[ran]] = here
            continue
        table_steps = float((hours * 3600 * planned).sum())
        if math.isfinite(table_steps) and table_steps > 0:
            measured[rows] = planned * steps / table_steps
    frame["measured_sps"] = measured
    frame["measuring"] = False
    return frame[SPEED_COLUMNS]


def _old_bounded(frame: pd.DataFrame, short: set) -> pd.DataFrame:
    """`frame` (`speeds` over placements' hours) with the speeds of the `short` jobs that
    read slower than planned after running less than SETUP_SECONDS taken back to
    unmeasured: over all such a job ran, its setup and the lag before its exit was seen
    may be most of it, so its speed is only a lower bound, which says "faster" truly and
    "slower" never (eight seconds of a job, setup included, read "3.2x slower")."""
    ran = frame.groupby("job_id")["hours"].transform("sum") * 3600
    slow = (frame["job_id"].isin(short) & (ran < SETUP_SECONDS)
            & ~(frame["measured_sps"] >= frame["planned_sps"]))
    return frame.assign(measured_sps=frame["measured_sps"].where(~slow),
                        measuring=frame["measuring"] | slow)


def _old_trained(placements: pd.DataFrame, readings: pd.DataFrame,
             rates: Mapping[int, Rate | None]) -> pd.DataFrame:
    """`speeds` of jobs with step readings: per GPU, the steps between each placement's
    first and last reading over the time between them; a GPU it has not trained on long
    enough is carried by its table's ratio from the one it trained on longest."""
    read = readings.set_index("id")
    mine = placements.assign(
        seconds=placements["id"].map(
            (read["last_at"] - read["first_at"]).dt.total_seconds()).fillna(0.0),
        steps=placements["id"].map(read["last_step"] - read["first_step"]).fillna(0.0))
    frame = mine.groupby(["job_id", "gpu_model", "gpu_count"], as_index=False,
                         sort=False)[["seconds", "steps"]].sum()
    frame["hours"] = frame["seconds"] / 3600
    frame["planned_sps"] = [rate_or_nan(rates.get(int(j)), g, c) for j, g, c in zip(
        frame["job_id"], frame["gpu_model"], frame["gpu_count"], strict=True)]
    enough = (frame["seconds"] >= MIN_TRAINING_SECONDS) & (frame["steps"] > 0)
    frame["measured_sps"] = (frame["steps"] / frame["seconds"]).where(enough)
    frame["measuring"] = False
    for _, rows in frame.groupby("job_id").indices.items():
        known = frame.iloc[rows][enough.iloc[rows]]
        if known.empty:  # reported steps, not yet for long enough anywhere
            frame.loc[frame.index[rows], "measuring"] = True
            continue
        ref = known.sort_values("seconds", ascending=False, kind="stable").iloc[0]
        others = frame.index[rows][~enough.iloc[rows].to_numpy()]
        frame.loc[others, "measured_sps"] = (ref["measured_sps"] * frame.loc[others,
                                             "planned_sps"] / ref["planned_sps"])
    return frame[SPEED_COLUMNS]
