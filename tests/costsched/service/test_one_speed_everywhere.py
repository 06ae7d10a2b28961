"""One measured speed per job, read alike in every view: `status`, `status --json`,
`report`, `report --json`, `report --html` and the dashboard's job page give the same
figure (the steps over the time the job trained on its placements, the gap between them
left out), or the same "too short to judge" with its reason.

A job preempted once with its steps read 20 s apart on each placement trained at 30
steps/s: every view says 30, not the half a pace over its preemption's gap would read.
A job whose steps were read 3 s and 1 s apart on its two placements (the readings of a
job preempted after 30 s) has no speed to judge: every view says so, with the same words,
and none states a figure (it read 16.5 steps/s in `status --json` and on the dashboard,
"too short to judge" in `report`)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from html import unescape
from pathlib import Path

import pytest

from costsched.measured import sps
from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, observe

pytest.importorskip("starlette", reason="the dashboard extra is not installed")

from starlette.testclient import TestClient  # noqa: E402

from costsched.dashboard.app import create_app  # noqa: E402

T = datetime.fromisoformat("2026-03-02T10:00:00+00:00")
UNTIL = (T + timedelta(hours=1)).isoformat()


def _preempted_once(store: PriceStore, name: str, legs: list[tuple[int, int]],
                    readings: list[tuple[float, int, float, int]],
                    gpus: tuple[str, ...] = ("L4", "L4")) -> int:
    """A job of 2,500 steps (planned at 30 steps/s on an L4) on two placements
    (`legs`: start and end, seconds after T; a gap between them), each with its first and
    last step reading (`readings`: step, second after T, step, second after T) on its GPU
    (`gpus`); it succeeded when the second ended."""
    from sqlalchemy import update

    from costsched.store.schema import placements

    observe(store, EAST, [(-10, 0.07962)])
    spec = {"spec": {"name": name, "throughputs": {"L4": 30.0, "T4": 10.0}, "steps": 2500},
            "source": "test"}
    job = store.jobs.create(name, spec, 2500, at=T)
    store.jobs.transition(job, "running", at=T)
    for i, ((start, end), gpu) in enumerate(zip(legs, gpus, strict=True)):
        store.jobs.place(job, EAST, gpu_model=gpu, gpu_count=1,
                         at=T + timedelta(seconds=start), usd_per_hour=0.07962,
                         reason="launch" if i == 0 else "recovery", instance=f"{name}-{i}")
        store.jobs.end_placement(job, T + timedelta(seconds=end))
    epoch = int(T.timestamp())
    with store.engine.begin() as conn:
        ids = [int(i) for i in store.jobs.placements(job)["id"]]
        for placement, (first, first_s, last, last_s) in zip(ids, readings, strict=True):
            conn.execute(update(placements).where(placements.c.id == placement).values(
                first_step=first, first_step_ts=epoch + first_s,
                last_step=last, last_step_ts=epoch + last_s))
    store.jobs.record_progress(job, 2500.0, at=T + timedelta(seconds=legs[-1][1]))
    store.jobs.transition(job, "succeeded", at=T + timedelta(seconds=legs[-1][1]))
    return job


def _flat(text: str) -> str:
    """Text as read, its wrapping undone."""
    return re.sub(r"[\s│┃]+", " ", unescape(re.sub(r"<[^>]+>", " ", text)))


def _views(store: PriceStore, db_path: Path, cli, tmp_path: Path, job: int  # noqa: ANN001
           ) -> dict[str, str | dict]:
    page = tmp_path / "report.html"
    return {
        "status": _flat(cli("status", str(job), "--no-reconcile").output),
        "status_json": json.loads(cli("status", str(job), "--no-reconcile",
                                      "--json").output)["jobs"][0],
        "report": _flat(cli("report", "--until", UNTIL, "--html", page).output),
        "html": _flat(page.read_text()),
        "report_json": json.loads(cli("report", "--until", UNTIL, "--json").output),
        "dashboard": _flat(TestClient(create_app(store)).get(f"/jobs/{job}").text),
    }


def _speed_rows(doc: dict, job: int) -> list[dict]:
    return [r for r in doc["speeds"] if int(r["job_id"]) == job]


def test_a_preempted_jobs_speed_is_its_pace_in_every_view(
        store: PriceStore, db_path: Path, cli, tmp_path: Path) -> None:  # noqa: ANN001
    # 0-40 s, then a 60 s gap, then 100-200 s: 600 steps in 20 s, 1,200 steps in 40 s.
    job = _preempted_once(store, "steady", [(0, 40), (100, 200)],
                          [(100, 10, 700, 30), (1000, 120, 2200, 160)])
    seen = _views(store, db_path, cli, tmp_path, job)
    assert seen["status_json"]["steps_per_second"] == pytest.approx(30.0)
    assert seen["status_json"]["speed_note"] is None
    [row] = _speed_rows(seen["report_json"], job)
    assert row["measured_sps"] == pytest.approx(30.0)  # not 1,800 steps over 160 s
    said = f"measured {sps(30.0)} steps/s on 1xL4"
    assert said in seen["status"]
    assert f"at {sps(30.0)} steps/s measured" in seen["dashboard"]
    for view in ("report", "html"):  # its row of the speed table: planned, measured
        assert re.search(rf"steady L4 1 1 30 {sps(30.0)}\b", seen[view]), view


def test_a_jobs_speed_too_short_to_judge_reads_so_in_every_view(
        store: PriceStore, db_path: Path, cli, tmp_path: Path) -> None:  # noqa: ANN001
    # The trial's readings: 649 to 715 over 3 s, then 1,687 twice over 1 s.
    job = _preempted_once(store, "brief", [(0, 30), (32, 91)],
                          [(649, 21, 715, 24), (1687, 61, 1687, 62)])
    seen = _views(store, db_path, cli, tmp_path, job)
    note = seen["status_json"]["speed_note"]
    assert seen["status_json"]["steps_per_second"] is None  # was 16.5
    assert note and note.startswith("too short to judge")
    [row] = _speed_rows(seen["report_json"], job)
    assert row["measured_sps"] is None or row["measured_sps"] != row["measured_sps"]
    assert row["flag"] == f"job {job} (brief): {note}"
    for view in ("status", "report", "html", "dashboard"):
        assert _flat(note) in seen[view], view
    assert "steps/s measured" not in seen["dashboard"]


def test_a_job_on_two_gpus_shows_its_speed_where_it_trained_longest(
        store: PriceStore, db_path: Path, cli, tmp_path: Path) -> None:  # noqa: ANN001
    # 20 s on a T4 at 10 steps/s, then 40 s on an L4 at 30 steps/s, a minute apart.
    job = _preempted_once(store, "two-gpus", [(0, 40), (100, 200)],
                          [(100, 10, 300, 30), (1000, 120, 2200, 160)], gpus=("T4", "L4"))
    seen = _views(store, db_path, cli, tmp_path, job)
    rows = _speed_rows(seen["report_json"], job)
    assert [(r["gpu_model"], r["measured_sps"]) for r in rows] == [
        ("L4", pytest.approx(30.0)), ("T4", pytest.approx(10.0))]  # the longest first
    assert seen["status_json"]["steps_per_second"] == pytest.approx(30.0)
    assert f"measured {sps(30.0)} steps/s on 1xL4" in seen["status"]
    assert f"at {sps(30.0)} steps/s measured" in seen["dashboard"]
