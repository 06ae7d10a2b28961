"""launchers/local.py: examples/train.py under real agent subprocesses, with a local
checkpoint store; stops, preemptions, notices, relaunches and a restart of costsched."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from costsched.model import InvalidInput, Offering
from launchers.base import TAG_ATTEMPT, TAG_JOB, LaunchSpec
from launchers.checkpoints import open_store
from launchers.local import LocalLauncher
from launchers.procfs import group_members, proc_stat

TRAIN = Path(__file__).resolve().parents[2] / "examples" / "train.py"
STEPS = 400
OFFERING = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)


def train(result: Path) -> str:
    return (f"python {shlex.quote(str(TRAIN))} --steps {STEPS} --step-seconds 0.005 "
            f"--checkpoint-every 0.1 --result {shlex.quote(str(result))}")


@pytest.fixture(scope="module")
def unbroken(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The final weights of a run never stopped."""
    where = tmp_path_factory.mktemp("unbroken")
    subprocess.run([sys.executable, str(TRAIN), "--steps", str(STEPS), "--checkpoint-dir",
                    str(where / "ckpt"), "--result", str(where / "w.npy")], check=True,
                   capture_output=True, timeout=60)
    return (where / "w.npy").read_bytes()


@pytest.fixture
def launcher(tmp_path: Path) -> LocalLauncher:
    return LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)


def spec(tmp_path: Path, attempt: str, command: str | None = None, **changes: object
         ) -> LaunchSpec:
    base = LaunchSpec(job_id=7, job_name="train", command=command or train(tmp_path / "w.npy"),
                      offering=OFFERING, checkpoint_uri=str(tmp_path / "store"),
                      attempt=attempt)
    return dataclasses.replace(base, **changes)


def wait_for(predicate: Callable[[], object], timeout: float = 120) -> None:
    """Once `predicate` is true; an AssertionError after `timeout` seconds (generous: a
    bound on a hang, not on a loaded machine's speed)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def wait_state(launcher: LocalLauncher, instance_id: str, *states: str) -> str:
    wait_for(lambda: launcher.status(instance_id).state in states)
    return launcher.status(instance_id).state


def newest_step(tmp_path: Path) -> int:
    store = open_store(str(tmp_path / "store"))
    newest = store.newest_verified()
    assert newest is not None
    fetched = store.fetch(newest, tmp_path / f"fetched-{newest.version}")
    return int(np.load(fetched / "checkpoint.npz")["step"])


def started_at(launcher: LocalLauncher, instance_id: str) -> int:
    wait_for(lambda: "resumed at step" in launcher.logs(instance_id))
    return int(launcher.logs(instance_id).split("resumed at step ")[1].split()[0])


@pytest.mark.results
def test_stop_then_relaunch_resumes_and_ends_with_the_same_weights(
        tmp_path: Path, launcher: LocalLauncher, unbroken: bytes) -> None:
    first = launcher.launch(spec(tmp_path, "a1"))
    assert first.state == "running" and first.id == "7-a1"
    assert first.offering_key == OFFERING.key
    store = open_store(str(tmp_path / "store"))
    wait_for(store.newest_verified)
    launcher.request_stop(first.id)
    assert wait_state(launcher, first.id, "stopped", "succeeded", "failed") == "stopped"
    assert launcher.status(first.id).exit_code == 0
    stopped_at = newest_step(tmp_path)
    assert 0 < stopped_at < STEPS
    assert f"checkpointed at step {stopped_at}" in launcher.logs(first.id)
    second = launcher.launch(spec(tmp_path, "a2"))
    assert started_at(launcher, second.id) == stopped_at
    assert wait_state(launcher, second.id, "succeeded", "failed") == "succeeded"
    assert (tmp_path / "w.npy").read_bytes() == unbroken


@pytest.mark.results
def test_preempted_without_notice_resumes_from_the_newest_checkpoint(
        tmp_path: Path, launcher: LocalLauncher, unbroken: bytes) -> None:
    first = launcher.launch(spec(tmp_path, "a1"))
    store = open_store(str(tmp_path / "store"))
    wait_for(lambda: len(store.list()) >= 2)
    launcher.preempt(first.id)
    gone = launcher.status(first.id)
    assert gone.state == "preempted" and not gone.live
    pid = json.loads((tmp_path / "instances" / "7-a1" / "instance.json").read_text())["pid"]
    assert not group_members(pid)  # the agent and the job are gone
    newest = store.newest_verified()
    assert newest is not None and newest.version == store.list()[-1].version  # intact
    at = newest_step(tmp_path)
    second = launcher.launch(spec(tmp_path, "a2"))
    assert started_at(launcher, second.id) == at
    assert wait_state(launcher, second.id, "succeeded", "failed") == "succeeded"
    assert (tmp_path / "w.npy").read_bytes() == unbroken


def test_a_notice_stops_the_job_with_a_checkpoint_then_takes_the_instance(
        tmp_path: Path, launcher: LocalLauncher) -> None:
    first = launcher.launch(spec(tmp_path, "a1"))
    wait_for(open_store(str(tmp_path / "store")).newest_verified)
    launcher.notice(first.id)  # returns once the instance is gone
    gone = launcher.status(first.id)
    assert gone.state == "preempted" and gone.exit_code == 0
    assert "notice" in gone.detail
    log = launcher.logs(first.id)
    assert f"SIGTERM: checkpointed at step {newest_step(tmp_path)}," in log


def test_a_command_that_does_not_exist_fails_with_127(tmp_path: Path,
                                                     launcher: LocalLauncher) -> None:
    instance = launcher.launch(spec(tmp_path, "a1", command="no-such-command-costsched"))
    assert wait_state(launcher, instance.id, "succeeded", "failed") == "failed"
    failed = launcher.status(instance.id)
    assert failed.exit_code == 127
    assert "command not found" in failed.detail and "no-such-command-costsched" in failed.detail


def test_a_base_dir_that_cannot_be_written_is_one_line_of_invalid_input(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(InvalidInput) as err:
        LocalLauncher(blocker / "instances").launch(spec(tmp_path, "a1", command="true"))
    assert str(blocker / "instances") in str(err.value) and "\n" not in str(err.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_base_dir_is_invalid_input(tmp_path: Path) -> None:
    base = tmp_path / "ro"
    base.mkdir(mode=0o500)
    with pytest.raises(InvalidInput, match="not writable"):
        LocalLauncher(base).launch(spec(tmp_path, "a1", command="true"))


@pytest.mark.parametrize("field,value", [
    ("attempt", "../escape"), ("attempt", ".."), ("attempt", "a/b"), ("attempt", ""),
    ("attempt", "a;touch x"), ("attempt", "a\n"), ("job_id", -1)])
def test_hostile_names_cannot_escape_the_base_dir(tmp_path: Path, launcher: LocalLauncher,
                                                  field: str, value: object) -> None:
    with pytest.raises(InvalidInput) as err:
        launcher.launch(dataclasses.replace(spec(tmp_path, "a1", command="true"),
                                            **{field: value}))
    assert "\n" not in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["instances"])


@pytest.mark.parametrize("name", ["../../etc", "x $(touch pwned)", "my job; rm -rf ~"])
def test_a_hostile_job_name_is_only_data(tmp_path: Path, launcher: LocalLauncher,
                                         name: str) -> None:
    instance = launcher.launch(dataclasses.replace(spec(tmp_path, "a1", command="true"),
                                                   job_name=name))
    folder = (tmp_path / "instances" / instance.id).resolve()
    assert folder.parent == (tmp_path / "instances").resolve()
    launcher.terminate(instance.id)
    assert not list(tmp_path.rglob("pwned")) and not (tmp_path / "etc").exists()


def test_instance_ids_and_planted_symlinks_cannot_escape(tmp_path: Path,
                                                         launcher: LocalLauncher) -> None:
    for hostile in ("../../etc", "7-../../x", "/etc/passwd", "7-a/../../b"):
        with pytest.raises(InvalidInput):
            launcher.status(hostile)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "instances").mkdir()
    (tmp_path / "instances" / "7-evil").symlink_to(outside)
    with pytest.raises(InvalidInput, match="outside the base directory"):
        launcher.launch(spec(tmp_path, "evil", command="true"))
    assert list(outside.iterdir()) == []


def test_a_new_launcher_sees_the_same_instances_and_states(tmp_path: Path,
                                                          launcher: LocalLauncher) -> None:
    done = launcher.launch(spec(tmp_path, "done", command="true"))
    wait_state(launcher, done.id, "succeeded")
    long = launcher.launch(spec(tmp_path, "long", command="sleep 60"))
    other = launcher.launch(spec(tmp_path, "x", command="true", job_id=8))
    record = json.loads((tmp_path / "instances" / "7-long" / "instance.json").read_text())
    assert record["tags"] == {TAG_JOB: "7", TAG_ATTEMPT: "long"}
    assert record["offering_key"] == list(OFFERING.key) and record["pid"] > 0

    restarted = LocalLauncher(tmp_path / "instances", grace_seconds=1)
    assert [i.id for i in restarted.instances(7)] == [done.id, long.id]
    assert {i.id for i in restarted.instances()} == {done.id, long.id, other.id}
    assert restarted.status(done.id).state == "succeeded"
    assert restarted.status(long.id).state == "running"
    restarted.terminate(long.id)
    restarted.terminate(long.id)  # idempotent
    assert restarted.status(long.id).state == launcher.status(long.id).state == "terminated"
    assert not group_members(record["pid"])


def test_a_reused_pid_is_not_taken_for_the_agent(tmp_path: Path,
                                                  launcher: LocalLauncher) -> None:
    instance = launcher.launch(spec(tmp_path, "a1", command="true"))
    wait_state(launcher, instance.id, "succeeded")
    path = tmp_path / "instances" / "7-a1"
    (path / "status.json").unlink()
    record = json.loads((path / "instance.json").read_text())
    stranger = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:  # a live process group holds the pid now: with the agent's start time, it is ours
        real_start = proc_stat(stranger.pid).start_time
        for start, state in ((real_start + 1, "preempted"), (real_start, "running")):
            record.update(pid=stranger.pid, start_time=start)
            (path / "instance.json").write_text(json.dumps(record))
            assert launcher.status(instance.id).state == state
    finally:
        stranger.kill()
        stranger.wait()


def test_launching_an_attempt_again_finds_the_same_instance(tmp_path: Path,
                                                            launcher: LocalLauncher) -> None:
    first = launcher.launch(spec(tmp_path, "a1", command="sleep 60"))
    path = tmp_path / "instances" / "7-a1" / "instance.json"
    pid = json.loads(path.read_text())["pid"]
    again = launcher.launch(spec(tmp_path, "a1", command="sleep 60"))
    assert again.id == first.id and again.state == "running"
    assert json.loads(path.read_text())["pid"] == pid
    launcher.terminate(first.id)
    assert launcher.status(first.id).state == "terminated"


def test_unknown_instances_and_logs(tmp_path: Path, launcher: LocalLauncher) -> None:
    with pytest.raises(InvalidInput, match="unknown"):
        launcher.status("7-nothing")
    instance = launcher.launch(spec(tmp_path, "a1", command="for i in 1 2 3 4 5; do echo $i; done"))
    wait_state(launcher, instance.id, "succeeded")
    assert launcher.logs(instance.id, tail=2) == "4\n5\n"
