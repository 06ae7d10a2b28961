"""Whether a checkpoint version's step is inferred (read off the time its files were
written, `ProgressReadings.saved_at`) or known (its marker's, its files' names'), kept
beside the checkpoints for the agent that restores the version (`launchers.version_steps`),
and carried by the status file and the heartbeat."""

from __future__ import annotations

import os
from pathlib import Path

from launchers import heartbeats, version_steps
from launchers.checkpoints.local import LocalStore
from launchers.progress_readings import INFERRED, REPORTED_WITH_NS, ProgressReadings, inferred
from launchers.publisher import COMMIT, Publisher, restore
from tests.launchers.test_agent import finish, start_agent

S = 1_000_000_000  # ns


def _readings(tmp_path: Path) -> ProgressReadings:
    """Step 398 reported at 99 s, step 400 at 101 s."""
    progress = tmp_path / "progress"
    readings = ProgressReadings(progress)
    readings.begin(0)
    for step, at in ((398, 99 * S), (400, 101 * S)):
        progress.write_text(f"{step}\n")
        os.utime(progress, ns=(at, at))
        readings.sample()
    return readings


def test_a_step_read_off_the_time_is_inferred_a_marker_s_or_a_name_s_is_not(
        tmp_path: Path) -> None:
    readings = _readings(tmp_path)
    assert readings.saved_at(100 * S) == (398, True)
    assert readings.step_at(100 * S) == 398
    assert readings.saved_at(100 * S, said=400) == (400, False)
    assert readings.saved_at(100 * S, named=398) == (398, False)
    # up to the step it reported next (400 at 101 s) a name gives it; beyond, not
    assert readings.saved_at(100 * S, named=400) == (400, False)
    assert readings.saved_at(100 * S, named=401) == (398, True)


def test_a_version_s_step_is_kept_for_the_agent_that_restores_it(tmp_path: Path) -> None:
    uri = str(tmp_path / "store")
    assert version_steps.of(uri, 1) == (None, False)  # none kept (an older agent's)
    version_steps.keep(uri, 1, 60, False)
    version_steps.keep(uri, 2, 398, True)
    assert version_steps.of(uri, 1) == (60, False)
    assert version_steps.of(uri, 2) == (398, True)
    for version in range(3, 3 + version_steps.KEPT):
        version_steps.keep(uri, version, version, True)
    assert version_steps.of(uri, 1) == (None, False)  # the newest KEPT are kept
    (tmp_path / "store" / version_steps.FOLDER / version_steps.NAME).write_text("{not json")
    assert version_steps.of(uri, 5) == (None, False)  # unreadable: not known


def test_a_restored_version_s_step_is_its_marker_s_else_the_one_kept(tmp_path: Path) -> None:
    store, folder = LocalStore(tmp_path / "store"), tmp_path / "checkpoints"
    folder.mkdir()
    (folder / "state.pkl").write_text("400")
    publisher = Publisher(store, folder, settle=0)
    assert publisher.publish_changed(final=True) == 1
    publisher.keep_step(398, True)
    again = Publisher(store, tmp_path / "elsewhere")
    (tmp_path / "elsewhere").mkdir()
    again.version = restore(store, tmp_path / "elsewhere").version
    again.remember_all()
    assert again.restored_step() == (398, True)
    (folder / COMMIT).write_text("400")  # a marker that says its step: its word
    assert publisher.publish_changed(final=True) == 1
    again.version = restore(store, tmp_path / "elsewhere").version
    again.remember_all()
    assert again.restored_step() == (400, False)


def test_the_status_file_and_the_heartbeat_say_it() -> None:
    assert inferred({"checkpoint_step": 398, INFERRED: True})
    assert not inferred({"checkpoint_step": None, INFERRED: True})
    assert not inferred({"checkpoint_step": 398})  # an older agent's: not said
    doc = heartbeats.document(585, 1.0, 398, 2, True)
    assert doc[INFERRED] is True and heartbeats.steps(doc).checkpoint_inferred
    assert not heartbeats.steps(heartbeats.document(585, 1.0, 398, 2)).checkpoint_inferred


def _kept_version(tmp_path: Path, step: int, guessed: bool) -> None:
    """A version in the agent's store whose step its publisher kept."""
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "state.pkl").write_text(str(step))
    store = LocalStore(tmp_path / "store")
    publisher = Publisher(store, folder, settle=0)
    assert publisher.publish_changed(final=True) == 1
    publisher.keep_step(step, guessed)


def test_a_run_that_fails_at_once_says_the_restored_version_s_step(tmp_path: Path) -> None:
    _kept_version(tmp_path, 60, False)
    status, _ = finish(start_agent(tmp_path, "exit 1"), tmp_path)
    assert status["state"] == "failed" and status["checkpoint_version"] == 1
    assert (status["checkpoint_step"], status[INFERRED]) == (60, False)


def test_a_failed_setup_says_the_restored_version_s_step(tmp_path: Path) -> None:
    _kept_version(tmp_path, 398, True)
    status, _ = finish(start_agent(tmp_path, "true", "--setup", "exit 3"), tmp_path)
    assert (status["state"], status["phase"]) == ("failed", "setup")
    assert (status["checkpoint_step"], status[INFERRED]) == (398, True)


def test_a_step_reported_with_the_save_is_known(tmp_path: Path) -> None:
    # (a job that saves, then reports the step it saved: within REPORTED_WITH_NS of it)
    readings = _readings(tmp_path)
    assert readings.saved_at(101 * S - REPORTED_WITH_NS // 2) == (400, False)
    assert readings.saved_at(99 * S + REPORTED_WITH_NS // 2) == (398, False)
    assert readings.saved_at(99 * S + 2 * REPORTED_WITH_NS) == (398, True)
