"""A checkpoint version's step: the step the job had reported when its newest file was
written (read off the progress file's write times), never the one it reports when the
agent publishes it, seconds later."""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from launchers.progress_readings import REPORTED_WITH_NS, ProgressReadings, step_time
from tests.launchers.test_agent import finish, start_agent, wait_for

S = 1_000_000_000  # ns


def report(path: Path, step: int, at_ns: int) -> None:
    path.write_text(f"{step}\n")
    os.utime(path, ns=(at_ns, at_ns))


def test_the_step_reported_by_the_time_the_files_were_written(tmp_path: Path) -> None:
    progress = tmp_path / "progress"
    readings = ProgressReadings(progress)
    readings.begin(0)
    for step in range(1, 6):  # a step a second, from 101 s
        report(progress, step, (100 + step) * S)
        readings.sample()
    assert readings.step_at(103 * S) == 3  # written with step 3's report
    assert readings.step_at(103 * S + S // 2) == 3  # between two reports: the earlier
    assert readings.step_at(103 * S - S // 2) == 2
    assert readings.step_at(200 * S) == 5
    # a report just after the files (a job that checkpoints, then reports): theirs
    assert readings.step_at(103 * S - REPORTED_WITH_NS // 2) == 3
    # before the run's first report: the step it started from, 0 with no checkpoint
    assert readings.step_at(50 * S) == 0


def test_files_written_before_the_first_report_of_a_run_from_a_checkpoint(
        tmp_path: Path) -> None:
    progress = tmp_path / "progress"
    report(progress, 394, 90 * S)  # the run before: left in the file
    readings = ProgressReadings(progress)
    readings.begin(300)  # restored at 300
    readings.sample()
    assert list(readings.readings) == []  # an earlier run's step is no reading of this one
    report(progress, 301, 110 * S)
    readings.sample()
    assert readings.step_at(105 * S) == 300
    assert readings.step_at(111 * S) == 301
    readings.begin(None)  # from a checkpoint whose step is not known
    assert readings.step_at(105 * S) is None


def test_an_unreadable_or_malformed_progress_file_gives_no_reading(tmp_path: Path) -> None:
    progress = tmp_path / "progress"
    readings = ProgressReadings(progress)
    readings.begin(0)
    readings.sample()  # none yet
    report(progress, 0, 100 * S)
    progress.write_text("step 7\n")
    readings.sample()
    # no step reported in the run: the step saved is not known (never the one it began at)
    assert list(readings.readings) == [] and readings.step_at(200 * S) is None


def test_a_step_is_said_with_when_it_was_first_written(tmp_path: Path) -> None:
    progress = tmp_path / "progress"
    readings = ProgressReadings(progress)
    readings.begin(0)
    for step, at in ((1, 101), (2, 102), (2, 103)):  # step 2 written again at 103 s
        report(progress, step, at * S)
        readings.sample()
    assert readings.written_at(2) == 102.0
    assert readings.written_at(1) is None  # not the newest step read
    assert readings.written_at(None) is None
    assert step_time(102.5) == datetime(1970, 1, 1, 0, 1, 42, 500000, tzinfo=timezone.utc)
    assert [step_time(v) for v in (None, "102", True, -1, float("nan"))] == [None] * 5


def test_the_agent_says_when_the_job_wrote_its_step(tmp_path: Path) -> None:
    go = tmp_path / "go"
    job = (f"{sys.executable} -c \"import os, pathlib, time; "
           "p = pathlib.Path(os.environ['COSTSCHED_PROGRESS_FILE']); p.write_text('5'); "
           f"[time.sleep(0.05) for _ in iter(lambda: pathlib.Path('{go}').exists(), True)]\"")
    agent = start_agent(tmp_path, job)
    status = tmp_path / "work" / "status.json"
    try:
        wait_for(lambda: status.exists() and json.loads(status.read_text()).get("step") == 5)
        said = json.loads(status.read_text())
        written = (tmp_path / "work" / "progress").stat().st_mtime_ns / 1e9
        assert said["step_at"] == written
    finally:
        go.touch()
        finish(agent, tmp_path)
