"""A gang's node under its agent: the job runs in rounds, so that a gang that lost a node
keeps the nodes still running.

The launcher writes the gang's file (`gang.json` in rank 0's folder, atomically):

    {"round": 2, "paused": false, "nodes": 2, "ips": ["10.0.0.5", "10.0.0.6"]}

Every node's agent runs the job once per round, with SKYPILOT_NODE_IPS and
SKYPILOT_NUM_NODES (and costsched's names) from that round, and COSTSCHED_GANG_ROUND:

- **paused** (the launcher lost a node and replaces it): the agent sends its job SIGTERM
  (rank 0's checkpoints; its agent publishes what it wrote), kills what is left after the
  grace period, says `"phase": "paused"` in its status.json and waits for the next round;
- **a new round** (every node is up again; a replacement node, set up, says
  `"phase": "ready"` until it comes): the agent restores the job's newest verified
  checkpoint (nodes other than rank 0, whose own folder holds it) and starts the job again,
  a new rendezvous with the new addresses. The agent, its folder and its setup are kept:
  the node is not provisioned again.

A job that exits by itself ends the agent only when it is rank 0's and succeeded (the job's
end). Any other exit (a node whose peer was lost fails its collective) says
`"phase": "exited"` and waits for the launcher's word: a new round (the gang was repaired),
or SIGTERM (the gang ended: the agent writes the round's outcome and exits). No word for
`wait_seconds` ends the agent with the round's outcome, so that a node never waits for
ever on a costsched that is gone.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

GANG = "gang.json"  # in rank 0's folder: the gang's rounds (the launcher writes it)
ENV_ROUND = "COSTSCHED_GANG_ROUND"
_TICK = 0.05


class GangFile:
    """The gang's file, read again only when it changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int, int] | None = None
        self._doc: dict = {}

    def read(self) -> dict:
        try:
            stat = self.path.stat()
        except OSError:
            return {}
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            try:
                doc = json.loads(self.path.read_text())
            except (OSError, ValueError):
                return self._doc
            self._stamp, self._doc = stamp, doc if isinstance(doc, dict) else {}
        return self._doc

    def round_to_run(self, after: int) -> dict:
        """The round to run now: one after `after` that is not paused ({} if none)."""
        doc = self.read()
        number = doc.get("round")
        if isinstance(number, int) and number > after and not doc.get("paused"):
            return doc
        return {}

    def left(self, number: int, phase: str, version: int | None = None) -> None:
        """Round `number` ended on this node (`phase`: paused, exited; `version`: the
        checkpoint it published then): said where the launcher cannot see the node's
        status (`launchers.cloud_gang.StoreGangFile`)."""

    def resume_version(self) -> int | None:
        """The checkpoint version rank 0 left the last round with, which every other node
        starts the next round from (None: not said here; the newest is restored)."""
        return None

    def ready(self) -> None:
        """A replacement node, set up, waits for the next round: said where the launcher
        cannot see the node's status (`launchers.cloud_gang.StoreGangFile`)."""

    def stops(self, running: int) -> bool:
        """Whether round `running` is to stop: paused, or a later round begun."""
        doc = self.read()
        number = doc.get("round")
        return isinstance(number, int) and (number > running or
                                            (number == running and bool(doc.get("paused"))))


def write(path: Path, doc: dict) -> None:
    """A small JSON document (the gang's file, a node's record), atomically."""
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(doc))
    os.replace(temp, path)


def round_env(doc: dict) -> dict[str, str]:
    """What a round tells the job about the gang (SkyPilot's names and costsched's)."""
    ips = "\n".join(str(ip) for ip in doc.get("ips", []))
    nodes = str(doc.get("nodes", len(doc.get("ips", []))))
    values = {"NODE_IPS": ips, "NUM_NODES": nodes}
    env = {f"{p}_{k}": v for p in ("SKYPILOT", "COSTSCHED") for k, v in values.items()}
    env[ENV_ROUND] = str(doc.get("round", 1))
    return env


class NodeAgent(Protocol):
    """What the rounds need of the agent (`launchers.agent_loop.Agent`)."""

    poll: float

    @property
    def stop_reason(self) -> str: ...

    def run_job(self, env: dict[str, str], pause: Callable[[], bool]) -> int: ...

    def outcome(self, exit_code: int) -> dict: ...

    def report(self, status: dict) -> None: ...

    def heartbeat(self) -> None: ...

    @property
    def checkpoint_version(self) -> int | None: ...

    def restore_newest(self, at_most: int | None = None) -> None: ...


class Rounds:
    """The job of node `rank` run round after round (the module's doc)."""

    def __init__(self, gang: GangFile, rank: int, wait_seconds: float,
                 exit_wait: float | None = None) -> None:
        self.gang, self.rank, self.wait_seconds = gang, rank, wait_seconds
        # How long a node whose job exited by itself (not paused) waits for a new round
        # (`wait_seconds` unless given): short where the launcher learns of the exit only
        # when the agent ends.
        self.exit_wait = wait_seconds if exit_wait is None else exit_wait

    def run(self, agent: NodeAgent, env: dict[str, str]) -> dict:
        done, first = 0, True
        ending: dict | None = None  # what the agent ends with when no round comes
        replacement = not self.gang.round_to_run(0)
        if replacement:  # set up, it waits for the round
            agent.report({"state": "running", "phase": "ready", "round": 0,
                          "checkpoint_error": ""})
            self.gang.ready()
        wait = self.wait_seconds
        while True:
            doc = self._wait(agent, done, wait)
            if not doc:
                if ending is None:  # no round ran
                    ending = {**agent.outcome(0), "state": "stopped", "exit_code": None,
                              "detail": agent.stop_reason or "the gang never started"}
                return ending
            if self.rank != 0 and (replacement or not first):
                # The checkpoint rank 0 published as it paused: a replacement restored at
                # its start, maybe before rank 0 had published, so it restores again;
                # never one rank 0 wrote in the new round (rank 0 runs from its pause).
                agent.restore_newest(self.gang.resume_version())
            first, done = False, int(doc["round"])
            agent.report({"state": "running", "round": done, "checkpoint_error": ""})
            exit_code = agent.run_job({**env, **round_env(doc)},
                                      lambda number=done: self.gang.stops(number))
            outcome = agent.outcome(exit_code)
            if agent.stop_reason:
                return outcome
            if self.gang.stops(done):
                agent.report({**outcome, "state": "running", "phase": "paused",
                              "round": done})
                ending = {**outcome, "state": "stopped",
                          "detail": "the gang was paused and not resumed"}
                self.gang.left(done, "paused", agent.checkpoint_version)
                wait = self.wait_seconds
                continue
            if exit_code == 0 and self.rank == 0:
                return outcome  # the job's end
            agent.report({**outcome, "state": "running", "phase": "exited", "round": done,
                          "outcome": outcome["state"]})
            ending = outcome
            self.gang.left(done, "exited", agent.checkpoint_version)
            wait = self.exit_wait

    def _wait(self, agent: NodeAgent, after: int, seconds: float) -> dict:
        """The next round to run; {} when asked to stop or after `seconds`."""
        deadline = time.monotonic() + seconds
        next_beat = 0.0
        while not agent.stop_reason:
            doc = self.gang.round_to_run(after)
            if doc:
                return doc
            now = time.monotonic()
            if now >= deadline:
                return {}
            if now >= next_beat:
                agent.heartbeat()
                next_beat = now + agent.poll
            time.sleep(_TICK)
        return {}
