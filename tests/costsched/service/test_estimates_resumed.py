"""A job's prediction is kept however its launch lands: a launch a costsched resumed after
another died before its move or in the middle of it, and a stopped job started again before
any launch of it was predicted. The prediction is the plan's for the offering the job was
actually launched on. In-memory launcher (instances run at once), SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.report.estimates import estimate_table, predictions
from costsched.service import jobs as service
from costsched.service.jobs import launches
from costsched.store import PriceStore
from costsched.store.moves import MoveRecord
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


class Crash(BaseException):
    """costsched dying at this point (nothing after it runs)."""


@pytest.fixture()
def world(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, FakeLauncher, Path]:
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "train", "throughputs": {"V100": 0.5}, "steps": 3600, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(spec))
    return store, FakeLauncher(), path


def launch(store: PriceStore, launcher: FakeLauncher, spec: Path, tmp_path: Path) -> int:
    [job] = service.launch(store, spec, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return job.id


def crashed_launch(store: PriceStore, launcher: FakeLauncher, spec: Path, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> int:
    """A launch that died after it stored the job, before its launch move: the job id."""
    def die(*_args: object, **_kwargs: object) -> None:
        raise Crash

    with monkeypatch.context() as patch:
        patch.setattr(launches, "_start_launch", die)
        with pytest.raises(Crash):
            launch(store, launcher, spec, tmp_path)
    [record] = store.jobs.records()
    assert record.state == "pending" and not store.moves.of_job(record.id)
    return record.id


def assert_predicted_on(store: PriceStore, job_id: int, zone: str) -> dict:
    [plan] = store.jobs.predictions([job_id]).to_dict("records")
    [placed] = store.jobs.placements(job_id)[["zone", "instance"]].to_dict("records")[-1:]
    assert plan["zone"] == placed["zone"] == zone
    assert plan["steps"] == 3600 and plan["steps_per_second"] == 0.5
    assert plan["expected_hours"] >= 2.0  # 3600 steps at 0.5 steps/s
    assert plan["usd_per_hour"] == pytest.approx({"us-east-1a": 1.0, "us-east-1b": 2.0}[zone])
    return plan


def test_a_launch_normally_keeps_its_prediction(world, tmp_path: Path) -> None:
    store, launcher, spec = world
    job = launch(store, launcher, spec, tmp_path)
    assert_predicted_on(store, job, "us-east-1a")


def test_a_launch_resumed_before_its_move_keeps_a_prediction(
        world, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher, spec = world
    job = crashed_launch(store, launcher, spec, tmp_path, monkeypatch)
    assert store.jobs.predictions([job]).empty
    events = service.reconcile(store, launcher)
    assert f"job {job}: interrupted launch resumed" in events
    assert store.jobs.get(job).state == "running"
    assert_predicted_on(store, job, "us-east-1a")


def crashed_mid_launch(store: PriceStore, launcher: FakeLauncher, spec: Path,
                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MoveRecord:
    """A launch that died once its instance was asked for and placed, before its move was
    done (and before the launch's own prediction): its launch move."""
    original = store.moves.advance

    def advance(move: MoveRecord, state: str, **kwargs: object) -> MoveRecord:
        if state == "target_running":
            raise Crash
        return original(move, state, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(store.moves, "advance", advance)
        with pytest.raises(Crash):
            launch(store, launcher, spec, tmp_path)
    [record] = store.jobs.records()
    [move] = store.moves.of_job(record.id)
    assert move.state == "target_launched" and store.jobs.predictions([record.id]).empty
    return move


def test_a_launch_resumed_in_the_middle_of_its_move_keeps_a_prediction(
        world, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher, spec = world
    move = crashed_mid_launch(store, launcher, spec, tmp_path, monkeypatch)
    service.reconcile(store, launcher)
    assert store.moves.get(move.id).state == "done"
    assert_predicted_on(store, move.job_id, "us-east-1a")
    assert len([c for c in launcher.calls if c[0] == "launch"]) == 1  # not launched twice


def test_a_job_started_again_before_any_prediction_keeps_one_where_it_starts(
        world, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """costsched died in the middle of the launch; the user stopped the job before any
    reconcile, then started it again."""
    store, launcher, spec = world
    job = crashed_mid_launch(store, launcher, spec, tmp_path, monkeypatch).job_id
    assert service.stop(store, launcher, job).state == "stopped"
    # Prices changed meanwhile: it starts on zone b, and is predicted there.
    set_prices(store, {"us-east-1a": 3.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(minutes=1))
    assert service.start(store, launcher, job).state == "running"
    plan = assert_predicted_on(store, job, "us-east-1b")
    # The report's estimate versus actual now covers the job.
    table = estimate_table(predictions(store, [job]),
                           {r.id: r for r in store.jobs.records()}, [], [], {})
    assert [row["job_id"] for row in table] == [job]
    # Nothing done yet: its first start alone (15 min at $2/h), paid whole at the start.
    assert table[0]["expected_usd"] == pytest.approx(0.25 * 2.0)
    assert plan["expected_usd"] > 0


def test_a_job_started_again_keeps_its_first_prediction(world, tmp_path: Path) -> None:
    store, launcher, spec = world
    job = launch(store, launcher, spec, tmp_path)
    first = assert_predicted_on(store, job, "us-east-1a")
    service.stop(store, launcher, job)
    set_prices(store, {"us-east-1a": 3.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(minutes=1))
    service.start(store, launcher, job)
    assert store.jobs.placements(job)["zone"].tolist() == ["us-east-1a", "us-east-1b"]
    [kept] = store.jobs.predictions([job]).to_dict("records")
    assert kept == first
