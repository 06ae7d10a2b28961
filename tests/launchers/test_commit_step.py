"""A job may write the step it saved into its commit marker: then a published version's step
is that number, never the timing guess (a job whose next step's report lands within
REPORTED_WITH_NS of its save would be said one step on). An empty marker keeps the rule by
the progress file's times; content that is no whole number falls back to it, with no crash.
The publisher's looks are driven one by one, the files' times set by the test."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from launchers.checkpoints.local import LocalStore
from launchers.progress_readings import REPORTED_WITH_NS, ProgressReadings, saved_step
from launchers.publisher import COMMIT, Publisher, restore
from tests.launchers.test_agent import finish, start_agent, wait_for

S = 1_000_000_000  # ns
MS = 1_000_000


def write(path: Path, text: str, at_ns: int) -> None:
    path.write_text(text)
    os.utime(path, ns=(at_ns, at_ns))


def publish_after_a_quick_report(tmp_path: Path, marker: str) -> tuple[Publisher, int | None]:
    """Step 483 reported and saved (weights, then the marker holding `marker`) at 100 s;
    step 484 reported 5 ms later: the version's step."""
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    progress = tmp_path / "progress"
    readings = ProgressReadings(progress)
    readings.begin(0)
    write(progress, "483\n", 100 * S - MS)
    readings.sample()
    write(folder / "weights.npy", "w483", 100 * S)
    write(folder / COMMIT, marker, 100 * S + 1)  # touched after the weights
    write(progress, "484\n", 100 * S + 5 * MS)  # the next step, within REPORTED_WITH_NS
    readings.sample()
    publisher = Publisher(LocalStore(tmp_path / "store"), folder, settle=0)
    assert publisher.publish_changed() == 1
    return publisher, readings.step_at(publisher.written_ns, publisher.said_step)


def test_the_step_in_the_marker_is_the_versions_step(tmp_path: Path) -> None:
    assert 5 * MS < REPORTED_WITH_NS  # timing alone says 484
    publisher, step = publish_after_a_quick_report(tmp_path, "483\n")
    assert (publisher.said_step, step) == (483, 483)


def test_an_empty_marker_keeps_the_step_by_the_reports_times(tmp_path: Path) -> None:
    publisher, step = publish_after_a_quick_report(tmp_path, "")
    assert (publisher.said_step, step) == (None, 484)


@pytest.mark.parametrize("marker", ["step 483", "-483", "4.83e2", "483 484", "٤٨٣", "9" * 21,
                                    "4" * 5000, "\xff\xfe"])
def test_a_marker_that_holds_no_step_falls_back_to_the_times(tmp_path: Path,
                                                            marker: str) -> None:
    publisher, step = publish_after_a_quick_report(tmp_path, marker)
    assert (publisher.said_step, step) == (None, 484)


def test_saved_step_reads_a_whole_number_or_none(tmp_path: Path) -> None:
    marker = tmp_path / COMMIT
    assert saved_step(marker) is None  # no marker
    for text, step in (("0", 0), (" 17\n", 17), ("9" * 20, int("9" * 20)), ("", None)):
        marker.write_text(text)
        assert saved_step(marker) == step, text
    assert saved_step(tmp_path) is None  # a folder: unreadable, not a crash


def test_a_restored_version_says_its_markers_step(tmp_path: Path) -> None:
    """After a restore the step the restored set holds is known from its marker."""
    publisher, _ = publish_after_a_quick_report(tmp_path, "483\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    again = Publisher(publisher.store, elsewhere, settle=0)
    again.version = restore(publisher.store, elsewhere).version
    again.remember_all()
    assert again.said_step == 483


# Reports step 483, saves it (marker holding 483), reports 484 at once; then waits.
QUICK = (f"{sys.executable} -c \"import os, pathlib, time; "
         "e = os.environ; c = pathlib.Path(e['COSTSCHED_CHECKPOINT_DIR']); "
         "p = pathlib.Path(e['COSTSCHED_PROGRESS_FILE']); "
         "c.mkdir(parents=True, exist_ok=True); p.write_text('483'); "
         "(c / 'weights.npy').write_text('w483'); "
         f"(c / '{COMMIT}').write_text('483'); p.write_text('484'); "
         "[time.sleep(0.05) for _ in iter(lambda: pathlib.Path('{go}').exists(), True)]\"")


def test_the_agent_says_the_step_the_job_wrote_in_its_marker(tmp_path: Path) -> None:
    go = tmp_path / "go"
    agent = start_agent(tmp_path, QUICK.format(go=go))
    status = tmp_path / "work" / "status.json"

    def said() -> dict:
        return json.loads(status.read_text()) if status.exists() else {}

    try:
        wait_for(lambda: said().get("checkpoint_version") is not None
                 and said().get("step") == 484)
        assert said()["checkpoint_step"] == 483  # was: 484, the report just after the save
    finally:
        go.touch()
        finish(agent, tmp_path)
