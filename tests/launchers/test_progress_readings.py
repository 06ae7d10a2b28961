"""A checkpoint version's step: the step the job had reported when its newest file was
written (read off the progress file's write times), never the one it reports when the
agent publishes it, seconds later."""

from __future__ import annotations

import os
from pathlib import Path

from launchers.progress_readings import REPORTED_WITH_NS, ProgressReadings

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
    assert list(readings.readings) == [] and readings.step_at(200 * S) == 0
