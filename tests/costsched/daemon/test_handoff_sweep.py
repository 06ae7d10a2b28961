"""A supervisor killed before its end (kill -9, a crash) leaves its handoff folder in the
temporary directory and its advert beside the log: the next supervisor of the log removes
them once that pid is gone, and never a live supervisor's, nor any folder not ours."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from costsched.daemon import handoff
from costsched.daemon.handoff import Listening, advert_path
from costsched.daemon.handoff_sweep import FOLDER_PREFIX, sweep_dead

pytestmark = pytest.mark.skipif(handoff.PEERCRED is None, reason="SO_PEERCRED: Linux only")


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture()
def live_pid() -> Iterator[int]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc.pid
    proc.kill()
    proc.wait()


def left(log: Path, pid: int, folder: Path | None = None) -> tuple[Path, Path]:
    """What a supervisor `pid` of `log` leaves when killed: (its folder, its advert)."""
    folder = folder or Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
    folder.mkdir(exist_ok=True)
    (folder / "socket").touch()
    advert = advert_path(str(log), pid)
    advert.write_text(json.dumps({"pid": pid, "socket": str(folder / "socket")}))
    return folder, advert


def test_a_new_supervisor_removes_a_dead_ones_folder_and_advert(tmp_path: Path) -> None:
    log = tmp_path / "store.supervisor.log"
    folder, advert = left(log, dead_pid())
    listening = Listening.open(str(log), lambda given: [])
    assert listening is not None
    try:
        assert not folder.exists() and not advert.exists()
    finally:
        listening.close()


def test_a_live_supervisors_folder_and_advert_are_kept(tmp_path: Path, live_pid: int) -> None:
    log = tmp_path / "store.supervisor.log"
    folder, advert = left(log, live_pid)
    try:
        assert sweep_dead(str(log)) == []
        assert folder.is_dir() and advert.is_file()
    finally:
        shutil.rmtree(folder)


def test_a_folder_not_ours_is_never_removed(tmp_path: Path) -> None:
    log = tmp_path / "store.supervisor.log"
    outside = tmp_path / f"{FOLDER_PREFIX}elsewhere"  # our prefix, not in the tmp dir
    other = Path(tempfile.mkdtemp(prefix="someone-else-"))  # in the tmp dir, not our prefix
    link = Path(tempfile.gettempdir()) / f"{FOLDER_PREFIX}{tmp_path.name}-link"
    link.symlink_to(other)  # our prefix, a link to a folder not ours
    try:
        for named in (outside, other, link):
            advert = left(log, dead_pid(), named)[1]
            assert sweep_dead(str(log)) == [advert]
            assert named.exists() and (named / "socket").exists() and not advert.exists()
    finally:
        link.unlink()
        shutil.rmtree(other)
