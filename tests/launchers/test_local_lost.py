"""launchers/local_lost.py: a preempted local instance says when it was lost: the time
`preempt` (or the CLI's `preempt`) or `notice` took it away, else its agent's last
heartbeat; an instance still running, or ended by costsched, says nothing. Real agents."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from launchers.local import LocalLauncher
from launchers.local_index import _INDEX_VERSION, _fields, parse_index
from launchers.local_lost import PREEMPTED
from launchers.procfs import group_members
from tests.launchers.test_local import spec, wait_for

SLEEP = "exec sleep 60"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def launcher(tmp_path: Path) -> LocalLauncher:
    return LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)


def test_preempt_says_when_it_took_the_instance(tmp_path: Path, launcher: LocalLauncher
                                                ) -> None:
    first = launcher.launch(spec(tmp_path, "a1", command=SLEEP))
    assert first.lost_at is None and launcher.status(first.id).lost_at is None  # running
    before = datetime.now(timezone.utc)
    launcher.preempt(first.id)
    after = datetime.now(timezone.utc)
    gone = launcher.status(first.id)
    assert gone.state == "preempted" and gone.lost_at is not None
    assert before <= gone.lost_at <= after
    # A new launcher on the same folder (costsched restarted), and the index's entry.
    again = LocalLauncher(launcher.base_dir)
    assert again.status(first.id).lost_at == gone.lost_at
    assert [i.lost_at for i in again.instances(7)] == [gone.lost_at]
    doc = json.loads(json.dumps({"version": _INDEX_VERSION, "instances": {
        gone.id: [1, gone.created_at.isoformat(), _fields(gone)]}}))
    assert parse_index(doc)[gone.id][1].instance == gone


def test_the_command_line_preempt_says_it_too(tmp_path: Path, launcher: LocalLauncher
                                              ) -> None:
    first = launcher.launch(spec(tmp_path, "a1", command=SLEEP))
    before = datetime.now(timezone.utc)
    subprocess.run([sys.executable, "-m", "launchers.local", "preempt", "7", "--base-dir",
                    str(launcher.base_dir)], check=True, capture_output=True, cwd=ROOT,
                   timeout=60)
    gone = launcher.status(first.id)
    assert gone.state == "preempted"
    assert gone.lost_at is not None and before <= gone.lost_at <= datetime.now(timezone.utc)


def test_a_notice_says_when_the_instance_was_taken_after_its_grace(
        tmp_path: Path, launcher: LocalLauncher) -> None:
    first = launcher.launch(spec(tmp_path, "a1", command=SLEEP))
    launcher.notice(first.id)
    after = datetime.now(timezone.utc)
    gone = launcher.status(first.id)
    assert gone.state == "preempted" and gone.lost_at is not None
    assert after - timedelta(seconds=1) <= gone.lost_at <= after


def test_an_instance_killed_otherwise_was_lost_at_its_last_heartbeat(
        tmp_path: Path, launcher: LocalLauncher) -> None:
    first = launcher.launch(spec(tmp_path, "a1", command=SLEEP))
    folder = launcher.base_dir / first.id
    wait_for(lambda: (folder / "heartbeat").exists())
    pid = json.loads((folder / "instance.json").read_text())["pid"]
    os.killpg(pid, signal.SIGSTOP)  # no beat after the one read below
    # Stopped once no member runs (T; D: one waiting in the kernel, as a parent for the
    # child it is starting, stops on its way out): a signal is delivered when its
    # process next runs, which on a busy machine may be well after killpg returns.
    wait_for(lambda: all(m.state in "TtD" for m in group_members(pid).values()))
    beat = json.loads((folder / "heartbeat").read_text())["at"]
    os.killpg(pid, signal.SIGKILL)
    wait_for(lambda: launcher.status(first.id).state == "preempted")
    gone = launcher.status(first.id)
    assert not (folder / PREEMPTED).exists()
    assert gone.lost_at == datetime.fromtimestamp(beat, timezone.utc)


def test_an_instance_costsched_ended_says_nothing(tmp_path: Path,
                                                  launcher: LocalLauncher) -> None:
    first = launcher.launch(spec(tmp_path, "a1", command=SLEEP))
    launcher.terminate(first.id)
    ended = launcher.status(first.id)
    assert ended.state == "terminated" and ended.lost_at is None
