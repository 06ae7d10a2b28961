"""A job's measured pace pairs each step with the time the job reported it (the agent
says when its progress file was written), never with the later time costsched read it:
a step read seconds after it was written, at the start of a window, made the steps after
it look faster than the job can run. Synthetic readings on the in-memory launcher, and a
real local-launcher job that can make at most 20 steps a second."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.real_jobs import World, a_world, launch, set_prices, wait_for


def launched(store: PriceStore, tmp_path: Path) -> tuple[FakeLauncher, int, str, datetime]:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "km.yaml"
    path.write_text(yaml.safe_dump({
        "name": "km", "throughputs": {"V100": 40.0}, "steps": 100_000, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [instance] = launcher.states
    start = store.jobs.placements(job.id)["start_at"].iloc[0].to_pydatetime()
    return launcher, job.id, instance, start


@pytest.mark.parametrize("look", ["status", "reconcile"])
def test_the_pace_is_of_the_times_the_steps_were_reported(
        store: PriceStore, tmp_path: Path, look: str) -> None:
    launcher, job, instance, t0 = launched(store, tmp_path)

    def read(step: int, written: float, seen: float) -> service.JobStatus:
        """The instance says `step`, written `written` s after t0; read at `seen` s."""
        launcher.states[instance] = replace(launcher.states[instance], step=step,
                                            step_at=t0 + timedelta(seconds=written))
        at = t0 + timedelta(seconds=seen)
        if look == "reconcile":
            service.reconcile(store, launcher, at=at)
        [s] = service.status(store, launcher, job, at=at, reconcile_first=False)
        return s

    read(60, 3.0, 5.0)  # read 2 s after it was written (the agent's poll)
    s = read(280, 14.0, 15.0)  # 220 steps in 11 s: 20 steps/s
    assert s.pace == pytest.approx(20.0)  # was: 22, 220 steps over the 10 s between reads
    [(_, _, first, first_ts, last, last_ts)] = store.jobs.reading_rows([job])
    assert (first, last, last_ts - first_ts) == (60, 280, 11)


def test_readings_between_whole_seconds_never_shorten_the_time(
        store: PriceStore, tmp_path: Path) -> None:
    """Reading times are kept in whole seconds: a first one rounded down, a last one up."""
    launcher, job, instance, t0 = launched(store, tmp_path)
    t0 = t0.replace(microsecond=0) + timedelta(seconds=1)
    for step, seconds in ((100, 0.9), (300, 10.1)):  # 200 steps in 9.2 s
        launcher.states[instance] = replace(launcher.states[instance], step=step,
                                            step_at=t0 + timedelta(seconds=seconds))
        [s] = service.status(store, launcher, job, at=t0 + timedelta(seconds=11),
                             reconcile_first=False)
    assert s.pace == pytest.approx(200 / 11)  # 0 s to 11 s; was: 200 / 10 (0 s to 10 s)
    assert s.pace <= 200 / 9.2


def test_a_step_said_later_than_it_was_read_is_read_then(
        store: PriceStore, tmp_path: Path) -> None:
    """An instance's clock ahead of costsched's: never a reading after it was read."""
    launcher, job, instance, t0 = launched(store, tmp_path)
    for step, written, seen in ((100, 9.0, 5.0), (300, 20.0, 15.0)):
        launcher.states[instance] = replace(launcher.states[instance], step=step,
                                            step_at=t0 + timedelta(seconds=written))
        [s] = service.status(store, launcher, job, at=t0 + timedelta(seconds=seen),
                             reconcile_first=False)
    assert s.pace == pytest.approx(200 / 10)


@pytest.fixture()
def world(tmp_path: Path) -> Iterator[World]:
    """Agents that look every 2 s, as by default: a step read by costsched seconds after
    the job wrote it."""
    with a_world(tmp_path, poll_seconds=2.0) as made:
        yield made


# A step every 0.05 s at least, each reported: at most 20 steps a second.
JOB = """\
import os, time
from pathlib import Path
step = 0
while True:
    time.sleep(0.05)
    step += 1
    target = os.environ["COSTSCHED_PROGRESS_FILE"]
    Path(target + ".tmp").write_text(f"{step}\\n")
    os.replace(target + ".tmp", target)
"""


def test_a_live_pace_is_never_above_what_the_job_can_do(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, instance = launch(world, JOB)
    wait_for(lambda: launcher.status(instance).step)
    wait_for(lambda: launcher.status(instance).step_at)  # the agent says when it was written
    paces = []
    for _ in range(80):  # looks a third of a second apart: the agent says a step each 2 s
        [s] = service.status(store, launcher, job.id)
        paces += [s.pace] if s.pace is not None else []
        if len(paces) >= 3:  # (a pace once it trained 10 s: `measured.MIN_TRAINING_SECONDS`)
            break
        time.sleep(0.3)
    wait_for(lambda: len(paces) >= 3 or None)
    # 20 steps/s at most; the file system's clock ticks (a few ms) over seconds of steps
    assert max(paces) <= 20 * 1.01, paces
