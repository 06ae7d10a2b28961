"""launchers/local.py answering for many instances at once: `statuses` equals `status` one by
one over every state an instance folder can be in; settled instances are answered from the
index without opening their folders; the process table is read once; `instances(job)` opens
only that job's folders. Instance folders are written in the launcher's own record format,
their processes are real ones (sleep, sh) started in sessions of their own."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

import launchers.local as local
import launchers.local_records as local_records
import launchers.procfs as procfs
from costsched.model import Offering
from launchers.base import LaunchSpec
from launchers.json_files import read_json, write_json
from launchers.local import INDEX, LocalLauncher
from launchers.procfs import proc_stat
from launchers.status_file import write_status

OFFERING = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)


@pytest.fixture
def launcher(tmp_path: Path) -> LocalLauncher:
    return LocalLauncher(tmp_path / "instances", grace_seconds=1, start_grace_seconds=60)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen]]:
    started: list[subprocess.Popen] = []
    yield started
    for child in started:  # the whole group: a job may outlive its agent
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def make(launcher: LocalLauncher, job_id: int, attempt: str, pid: int | None = None,
         start_time: int | None = None, status: dict | None = None,
         launched_at: str | None = None) -> str:
    """An instance folder as launch() writes it, with the agent's pid and status given."""
    spec = LaunchSpec(job_id=job_id, job_name="j", command="true", offering=OFFERING,
                      checkpoint_uri="/nowhere", attempt=attempt)
    instance_id = f"{job_id}-{attempt}"
    folder = launcher.base_dir / instance_id
    folder.mkdir(parents=True)
    record = {**local_records.new_record(instance_id, spec), "pid": pid, "start_time": start_time}
    if launched_at is not None:
        record["launched_at"] = launched_at
    write_json(folder / local.INSTANCE, record)
    if status is not None:
        write_status(folder, status)
    return instance_id


def group(processes: list[subprocess.Popen], command: str) -> tuple[int, int]:
    """A process group of its own running `command`: (leader pid, leader start time)."""
    child = subprocess.Popen(["sh", "-c", command], start_new_session=True)
    processes.append(child)
    stat = proc_stat(child.pid)
    assert stat is not None
    return child.pid, stat.start_time


def every_state(launcher: LocalLauncher, processes: list[subprocess.Popen]) -> list[str]:
    """One folder per way an instance can read, keyed by the state expected."""
    running = make(launcher, 1, "running", *group(processes, "exec sleep 30"),
                   status={"state": "running", "step": 12})
    # The agent is gone but the job it started lives on in its group: still running.
    pid, start = group(processes, "sleep 30 & exit 0")
    processes[-1].wait()
    orphaned = make(launcher, 1, "orphaned", pid, start)
    pid, start = group(processes, "exit 0")
    processes[-1].wait()
    killed = make(launcher, 2, "killed", pid, start)
    succeeded = make(launcher, 2, "succeeded", pid, start,
                     status={"state": "succeeded", "exit_code": 0, "step": 400})
    failed = make(launcher, 3, "failed", pid, start,
                  status={"state": "failed", "exit_code": 127, "detail": "command not found",
                          "phase": "setup"})
    stopped = make(launcher, 3, "stopped", pid, start,
                   status={"state": "stopped", "exit_code": 0})
    noticed = make(launcher, 4, "noticed", pid, start, status={"state": "stopped"})
    (launcher.base_dir / noticed / local_records.NOTICE).touch()
    terminated = make(launcher, 4, "terminated", pid, start, status={"state": "stopped"})
    (launcher.base_dir / terminated / local_records.TERMINATED).touch()
    pending = make(launcher, 5, "pending")  # launched this instant, its agent not yet
    never = make(launcher, 5, "never", launched_at="2020-01-01T00:00:00+00:00")
    return [running, orphaned, killed, succeeded, failed, stopped, noticed, terminated,
            pending, never]


def settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the folders made so far be trusted to the index (2 s in use; 0.2 s here)."""
    monkeypatch.setattr(local, "_SETTLE_NS", 200_000_000)
    time.sleep(0.25)


def test_statuses_equal_status_one_by_one_in_every_state(
        tmp_path: Path, launcher: LocalLauncher, processes: list[subprocess.Popen],
        monkeypatch: pytest.MonkeyPatch) -> None:
    ids = every_state(launcher, processes)
    (launcher.base_dir / "9-unreadable").mkdir()
    (launcher.base_dir / "9-unreadable" / local.INSTANCE).write_text("{not json")
    outside = tmp_path / "outside"
    shutil.copytree(launcher.base_dir / ids[3], outside)
    (launcher.base_dir / "9-outside").symlink_to(outside)
    asked = [*ids, "8-unknown", "not an id", "../escape", "9-unreadable", "9-outside"]
    one_by_one = {i: launcher.status(i) for i in ids}
    assert [one_by_one[i].state for i in ids] == [
        "running", "running", "preempted", "succeeded", "failed", "stopped", "preempted",
        "terminated", "pending", "failed"]
    assert launcher.statuses(asked) == one_by_one  # the unknown and malformed left out
    settle(monkeypatch)
    assert launcher.statuses(asked) == one_by_one  # the settled ones kept in the index
    assert (launcher.base_dir / INDEX).exists()
    assert LocalLauncher(launcher.base_dir).statuses(asked) == one_by_one  # read from it
    # When each was made: its launch record's time, from its folder or the index alike.
    made = {i: read_json(launcher.base_dir / i / local.INSTANCE)["launched_at"] for i in ids}
    assert {i: s.created_at for i, s in one_by_one.items()} == {
        i: datetime.fromisoformat(m) for i, m in made.items()}
    assert one_by_one[ids[-1]].created_at == datetime(2020, 1, 1, tzinfo=timezone.utc)
    assert launcher.statuses([]) == {}
    assert LocalLauncher(launcher.base_dir.parent / "none").statuses(ids) == {}
    # In launch order ("never" was launched in 2020).
    assert [i.id for i in launcher.instances()] == [ids[-1], *ids[:-1]]
    assert [i.id for i in launcher.instances(4)] == ids[6:8]
    assert launcher.instances(6) == []


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    real = LocalLauncher._read

    def counting(self, instance_id, folder, groups=None):
        read.append(instance_id)
        return real(self, instance_id, folder, groups)

    monkeypatch.setattr(LocalLauncher, "_read", counting)
    return read


def test_settled_instances_are_answered_from_the_index(
        launcher: LocalLauncher, processes: list[subprocess.Popen],
        monkeypatch: pytest.MonkeyPatch) -> None:
    ids = every_state(launcher, processes)
    settle(monkeypatch)
    read = count_reads(monkeypatch)
    first = launcher.statuses(ids)
    assert sorted(read) == sorted(ids)
    index = json.loads((launcher.base_dir / INDEX).read_text())["instances"]
    assert set(index) == set(ids) - {"1-running", "1-orphaned", "5-pending"}
    read.clear()
    # A new launcher (costsched started again) opens only what may be moving.
    again = LocalLauncher(launcher.base_dir)
    assert again.statuses(ids) == first
    assert sorted(read) == ["1-orphaned", "1-running", "5-pending"]
    # A change to a settled instance's folder (terminate() marks it) is seen at once.
    read.clear()
    again.terminate("3-stopped")
    assert again.statuses(ids)["3-stopped"].state == "terminated"
    assert "3-stopped" in read
    assert again.status("3-stopped") == again.statuses(["3-stopped"])["3-stopped"]
    # A folder removed leaves the index at the next full listing.
    shutil.rmtree(launcher.base_dir / "2-succeeded")
    read.clear()
    assert "2-succeeded" not in {i.id for i in again.instances()}
    index = json.loads((launcher.base_dir / INDEX).read_text())["instances"]
    assert "2-succeeded" not in index and "2-killed" in index
    # 3-stopped changed moments ago: read again until it has settled.
    assert {"1-orphaned", "1-running", "5-pending"} <= set(read) <= {
        "1-orphaned", "1-running", "5-pending", "3-stopped"}


def test_a_recent_change_is_not_trusted_to_the_index(
        launcher: LocalLauncher, processes: list[subprocess.Popen],
        monkeypatch: pytest.MonkeyPatch) -> None:
    ids = every_state(launcher, processes)
    # A folder changed less than the settling time ago is not kept: a write within the
    # same clock tick would not move its change time.
    monkeypatch.setattr(local, "_SETTLE_NS", 3600 * 10**9)
    launcher.statuses(ids)
    assert not (launcher.base_dir / INDEX).exists()
    settle(monkeypatch)
    launcher.statuses(ids)
    assert (launcher.base_dir / INDEX).exists()


def test_a_damaged_index_is_ignored(launcher: LocalLauncher,
                                    processes: list[subprocess.Popen],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    ids = every_state(launcher, processes)
    settle(monkeypatch)
    truth = launcher.statuses(ids)
    path = launcher.base_dir / INDEX
    doc = json.loads(path.read_text())
    name = "2-succeeded"
    doc["instances"][name][2]["state"] = "no such state"
    doc["instances"]["3-failed"] = "garbage"
    path.write_text(json.dumps(doc))
    read = count_reads(monkeypatch)
    assert LocalLauncher(launcher.base_dir).statuses(ids) == truth
    assert {name, "3-failed"} <= set(read)
    path.write_text("[1, 2")
    assert LocalLauncher(launcher.base_dir).statuses(ids) == truth


def test_the_process_table_is_read_once_for_many_instances(
        launcher: LocalLauncher, processes: list[subprocess.Popen],
        monkeypatch: pytest.MonkeyPatch) -> None:
    ids = []
    for n in range(5):  # agents gone without a status: each needs its group looked up
        pid, start = group(processes, "exit 0")
        processes[-1].wait()
        ids.append(make(launcher, 10 + n, "a", pid, start))
    ids.append(make(launcher, 20, "a", *group(processes, "exec sleep 30")))
    scans = []
    real = procfs._live_processes
    monkeypatch.setattr(procfs, "_live_processes", lambda: scans.append(1) or real())
    seen = launcher.statuses(ids)
    assert [seen[i].state for i in ids] == ["preempted"] * 5 + ["running"]
    assert len(scans) == 1
    scans.clear()
    assert launcher.status(ids[-1]).state == "running"  # its leader lives: no scan
    assert scans == []


def test_a_job_s_instances_open_only_its_folders(
        launcher: LocalLauncher, monkeypatch: pytest.MonkeyPatch) -> None:
    for job_id in range(1, 40):
        make(launcher, job_id, "a", status={"state": "succeeded", "exit_code": 0})
    make(launcher, 7, "b", status={"state": "failed", "exit_code": 1})
    make(launcher, 77, "a", status={"state": "failed", "exit_code": 1})
    read = count_reads(monkeypatch)
    assert [i.id for i in launcher.instances(7)] == ["7-a", "7-b"]
    assert sorted(read) == ["7-a", "7-b"]


def test_a_launch_reads_only_its_own_instance(
        tmp_path: Path, launcher: LocalLauncher, monkeypatch: pytest.MonkeyPatch) -> None:
    for job_id in range(1, 30):
        make(launcher, job_id, "a", status={"state": "succeeded", "exit_code": 0})
    read = count_reads(monkeypatch)
    spec = LaunchSpec(job_id=99, job_name="j", command="sleep 0", offering=OFFERING,
                      checkpoint_uri=str(tmp_path / "store"), attempt="a")
    assert launcher.instances(99) == []
    instance = launcher.launch(spec)
    assert instance.state in ("running", "succeeded") and read == ["99-a"]
    deadline = time.monotonic() + 60
    while launcher.status("99-a").state == "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert launcher.status("99-a").state == "succeeded"


def test_a_job_s_instances_are_found_without_listing_every_folder(
        tmp_path: Path, launcher: LocalLauncher, monkeypatch: pytest.MonkeyPatch) -> None:
    # Folders made before the jobs' entries existed (an older version): found by listing.
    for job_id in (5, 55, 6):
        make(launcher, job_id, "a", status={"state": "succeeded", "exit_code": 0})
    assert [i.id for i in launcher.instances(5)] == ["5-a"]
    assert not (launcher.base_dir / local.JOBS).exists()
    # The first launch enters every folder there is, then its own, before its folder.
    spec = LaunchSpec(job_id=5, job_name="j", command="sleep 0", offering=OFFERING,
                      checkpoint_uri=str(tmp_path / "store"), attempt="b")
    launcher.launch(spec)
    assert sorted(p.name for p in (launcher.base_dir / local.JOBS).iterdir()) == [
        "5", "55", "6"]
    listed: list[Path] = []
    real = os.listdir

    def listing(path: str | os.PathLike = ".") -> list[str]:
        listed.append(Path(path))
        return real(path)

    monkeypatch.setattr(local.os, "listdir", listing)
    assert [i.id for i in launcher.instances(5)] == ["5-a", "5-b"]
    assert [i.id for i in launcher.instances(55)] == ["55-a"]
    assert launcher.instances(8) == []
    assert launcher.base_dir.resolve() not in listed  # the job's entries only
    shutil.rmtree(launcher.base_dir / "55-a")  # a folder removed by hand: not listed
    assert launcher.instances(55) == []
