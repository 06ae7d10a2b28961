"""When a job's agent is gone and its job runs on: nothing publishes its checkpoints any more,
nothing forwards a stop or a preemption notice, nothing will tell its exit code.

The recovery is checkpoint-and-relaunch, in this order:
1. a hung agent (its process alive, its heartbeat stale) is killed, alone;
2. the checkpoint files the job wrote since the agent stopped are published (those the
   store holds already, same name and SHA-256, are not published again);
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

import logging
from pathlib import Path

from launchers.agent import Publisher
from launchers.checkpoints import CheckpointStore

log = logging.getLogger("costsched.agent_recovery")


def publish_leftovers(store: CheckpointStore, directory: Path) -> int | None:
    """Publish each complete checkpoint file of `directory` whose content the store does not
    hold under its name yet; the newest version published, or None when none was."""
    publisher = Publisher(store, directory)
    newest: dict[str, str] = {}
    for checkpoint in store.list():  # oldest first: the newest version of a name wins
        newest[checkpoint.name] = checkpoint.sha256
    for name, sha in newest.items():
        publisher.known(name, sha)
    before = publisher.version
    publisher.publish_changed()
    if publisher.error:
        log.error("%s", publisher.error)
    return publisher.version if publisher.version != before else None
