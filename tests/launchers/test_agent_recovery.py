"""launchers/agent_recovery.py with the local launcher and real processes: a hung agent
(stopped, its heartbeat old) is seen and recovered like a dead one; the agent's heartbeat
is written while it runs; leftovers already in the store are not published again."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

from launchers.agent_recovery import publish_leftovers
from launchers.checkpoints import open_store
from launchers.heartbeats import HEARTBEAT
from launchers.heartbeats import read_local as read_heartbeat
from launchers.local import LocalLauncher
from launchers.procfs import group_members
from tests.launchers.test_local import launcher, spec, wait_for  # noqa: F401 - fixture


def test_the_agent_beats_while_its_job_runs(launcher: LocalLauncher,  # noqa: F811
                                            tmp_path: Path) -> None:
    instance = launcher.launch(spec(tmp_path, "a0", command="sleep 30"))
    folder = tmp_path / "instances" / instance.id
    wait_for(lambda: read_heartbeat(folder))
    first = read_heartbeat(folder)["at"]
    wait_for(lambda: read_heartbeat(folder)["at"] > first)  # every poll interval (0.1 s)
    assert read_heartbeat(folder)["pid"] == json.loads((folder / "instance.json")
                                                       .read_text())["pid"]
    assert launcher.status(instance.id).agent == ""
    launcher.terminate(instance.id)


def test_a_hung_agent_is_said_then_ended_and_its_job_checkpointed(
        launcher: LocalLauncher, tmp_path: Path) -> None:  # noqa: F811
    instance = launcher.launch(spec(tmp_path, "a0"))
    folder = tmp_path / "instances" / instance.id
    store = open_store(str(tmp_path / "store"))
    wait_for(store.newest_verified)
    agent = json.loads((folder / "instance.json").read_text())["pid"]
    os.kill(agent, signal.SIGSTOP)  # hung: alive, and silent
    try:
        # Its last heartbeat, as if long ago (a stopped agent does not write another).
        (folder / HEARTBEAT).write_text(json.dumps({"pid": agent, "at": time.time() - 3600}))
        seen = launcher.status(instance.id)
        assert seen.state == "running"
        assert "has not reported for" in seen.agent and "hung" in seen.agent
        assert seen.checkpoint_error == seen.agent
        published = store.newest_verified().version
        assert launcher.recover_agent(instance.id)
    finally:
        with contextlib.suppress(ProcessLookupError):  # gone by now, unless a step failed
            os.kill(agent, signal.SIGCONT)
    after = launcher.status(instance.id)
    assert after.state == "stopped" and "the agent was gone" in after.detail
    assert not group_members(agent)
    assert store.newest_verified().version > published  # the job's SIGTERM checkpoint
    assert (folder / "agent-lost").exists()
    assert "SIGTERM: checkpointed" in launcher.logs(instance.id)


def test_leftovers_the_store_holds_already_are_not_published_again(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    (folder / "a.bin").write_bytes(b"one")
    store.publish(folder / "a.bin")
    (folder / "b.bin").write_bytes(b"two")
    (folder / "c.bin.tmp123").write_bytes(b"half written")
    assert publish_leftovers(store, folder) == 2  # b.bin only
    assert [c.name for c in store.list()] == ["a.bin", "b.bin"]
    assert publish_leftovers(store, folder) is None
    (folder / "a.bin").write_bytes(b"one, later")
    assert publish_leftovers(store, folder) == 3
