"""When a job's agent is gone and its job runs on: nothing publishes its checkpoints any more,
nothing forwards a stop or a preemption notice, nothing will tell its exit code.

The recovery is checkpoint-and-relaunch, in this order:
1. a hung agent (its process alive, its heartbeat stale) is killed, alone;
2. the checkpoint files the job wrote since the agent stopped are published when the set
   is whole (`publish_leftovers`; those the store holds already, same name and SHA-256,
   are not published again);
3. the job is asked to checkpoint and stop (SIGTERM to its processes, as on a preemption
   notice), killed after the grace period;
4. what it wrote on the way out is published;
5. the instance says "stopped": the next reconcile relaunches the job from its newest
   verified checkpoint, as after a preemption.

Why not restart an agent beside the running job: the job is not the new agent's child, so
no new agent can learn its exit code (a job that finished could not be told from one that
failed), and two processes would publish to one store. Checkpoint-and-relaunch loses no
work the job checkpoints (what it wrote is published before and after the stop), and the
job never runs twice: its old processes are all gone before the relaunch is asked for.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from launchers.checkpoints import CheckpointStore, open_store
from launchers.heartbeats import read_local, stale_after
from launchers.procfs import has_proc, proc_stat
from launchers.publisher import Publisher
from launchers.status_file import write_status

log = logging.getLogger("costsched.agent_recovery")


def publish_leftovers(store: CheckpointStore, directory: Path,
                      final: bool = True) -> int | None:
    """Publish the complete checkpoint files of `directory` as a new version when one of
    them is not in the store's newest verified version with the same content (those that
    are, the version names without uploading them again); the version published, or None
    when none was. `final`: the job has exited; while it runs, only a set its commit
    marker says is whole (`launchers.publisher`): one look cannot tell that a set stopped
    changing, nor that a lone file is not being written."""
    publisher = Publisher(store, directory)
    newest = store.newest_verified()
    if newest is not None:
        publisher.based_on(newest)
    before = publisher.version
    publisher.publish_changed(final)
    if publisher.error:
        log.error("%s", publisher.error)
    return publisher.version if publisher.version != before else None


_KILL_WAIT = 10.0  # seconds a SIGKILLed agent may take to go
_WAIT = 0.05


def same_process(pid: int | None, start_time: int | None) -> bool:
    """Whether `pid` is still the live (not zombie) process that started at `start_time`."""
    if pid is None:
        return False
    stat = proc_stat(pid)
    return stat is not None and stat.start_time == start_time and stat.state != "Z"


def trouble(workdir: Path, pid: int | None, start_time: int | None, poll: float) -> str:
    """Why the agent (`pid`, started at `start_time`) of an instance whose job runs no
    longer looks after it ('' when it does): its process is gone, or its heartbeat in
    `workdir` is older than `stale_after(poll)`."""
    if has_proc() and not same_process(pid, start_time):
        return f"the agent (pid {pid}) is gone while the job runs on"
    beat = read_local(workdir)
    if beat:
        age = time.time() - float(beat["at"])
        if age > stale_after(poll):
            return f"the agent has not reported for {age:,.0f} s (hung)"
    return ""


def recover(workdir: Path, pid: int, start_time: int | None, checkpoint_uri: str, *,
            reap: Callable[[], None], end_job: Callable[[], None]) -> None:
    """The recovery of the module's doc for an instance whose working directory is
    `workdir` and whose agent was `pid` (the leader of the job's process group): `reap`
    collects the agent once killed (when it is our child), `end_job` sends the group
    SIGTERM, waits the grace period, then kills what is left."""
    from launchers.agent_workdir import CHECKPOINTS, PROGRESS  # the agent's, loaded here
    from launchers.progress_readings import read_progress

    if same_process(pid, start_time):  # hung: the agent alone goes, its job lives on
        _kill(pid)
        deadline = time.monotonic() + _KILL_WAIT
        while same_process(pid, start_time) and time.monotonic() < deadline:
            reap()
            time.sleep(_WAIT)
    store = open_store(checkpoint_uri)
    checkpoints = workdir / CHECKPOINTS
    publish_leftovers(store, checkpoints, final=False)
    _kill_group(pid, signal.SIGTERM)  # the job checkpoints and exits, as on a notice
    end_job()
    publish_leftovers(store, checkpoints, final=True)
    newest = store.newest_verified()
    write_status(workdir, {
        "state": "stopped", "exit_code": None,
        "checkpoint_version": None if newest is None else newest.version,
        "detail": "the agent was gone: the job's checkpoints were published and the job "
                  "stopped, to be relaunched from its newest checkpoint",
        "step": read_progress(workdir / PROGRESS), "checkpoint_error": ""})


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _kill_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)
