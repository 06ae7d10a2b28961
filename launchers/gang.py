"""A gang on the local launcher: a job of N nodes runs as N agents, each in a node folder of
its own, with 127.0.0.1 as every node's address.

    base_dir/<job_id>-<attempt>/          node 0 (rank 0): the instance's folder, as for a
                                          job of one node; its agent alone publishes the
                                          checkpoints, and its end is the job's end
    base_dir/<job_id>-<attempt>/nodes/<rank>/   node <rank> (1 .. N-1): node.json (its
                                          agent's pid and start time), its own code/,
                                          checkpoints/ (restored, never published),
                                          job.log, agent.log, status.json

Every node's job gets SkyPilot's variables (SKYPILOT_NODE_RANK, SKYPILOT_NUM_NODES,
SKYPILOT_NODE_IPS one address a line, SKYPILOT_NUM_GPUS_PER_NODE) and the same as
COSTSCHED_NODE_RANK, COSTSCHED_NUM_NODES, COSTSCHED_NODE_IPS, COSTSCHED_NUM_GPUS_PER_NODE,
so a torchrun-style command runs unchanged; `setup` runs on every node.

A gang lives and ends as one: a launch starts all N agents or none; a node lost while rank
0 runs (preempted, or its job failed) breaks the gang: rank 0 is asked to stop (its job
checkpoints on SIGTERM and the agent publishes), then every node is ended. The instance
then reads as preempted (a node was taken away: the job is recovered from its newest
checkpoint on N nodes) or failed (a node's job exited with an error: the job fails, as it
would with that error on rank 0). A node whose job exits 0 before rank 0 is left alone
(a worker may finish early); when rank 0 ends, the nodes still running are ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from launchers.procfs import proc_stat

if TYPE_CHECKING:
    import subprocess

    from launchers.base import LaunchSpec


class Spawner(Protocol):
    """What a gang needs of its launcher (the local one): an agent started in a folder,
    and the children it keeps."""

    _children: dict[str, subprocess.Popen]

    def _spawn(self, folder: Path, spec: LaunchSpec, node_envs: dict[str, str],
               publish: bool) -> subprocess.Popen: ...


@dataclass(frozen=True)
class NodeState:
    """One node of a gang as its launcher sees it."""

    rank: int
    id: str  # the node's own instance on its cloud ('' when it has none)
    state: str  # one of launchers.base.INSTANCE_STATES: "preempted" when the cloud took it
    detail: str = ""
    address: str = ""  # its private address ('' while unknown)


class ReportsNodes(Protocol):
    """What a cloud launcher of gangs tells of each node (EC2, Compute Engine): the nodes
    of the gang `instance_id`, rank 0 first, so that recovery sees which node was lost."""

    runs_gangs: ClassVar[bool]

    def nodes(self, instance_id: str) -> list[NodeState]: ...


NODES = "nodes"
NODE = "node.json"  # in a node folder: its agent's pid and start time
NODE_LOST = "node-lost"  # in the instance folder: why the gang was broken (JSON)
LOOPBACK = "127.0.0.1"


def node_count(task: Mapping[str, Any]) -> int:
    """The job's nodes, from its task (1 when it does not say)."""
    value = task.get("num_nodes", 1) if isinstance(task, Mapping) else 1
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else 1


def node_folder(folder: Path, rank: int) -> Path:
    """Where node `rank` runs: the instance's own folder for rank 0."""
    return folder if rank == 0 else folder / NODES / str(rank)


def node_envs(rank: int, nodes: int, gpus_per_node: int,
              ips: list[str] | None = None) -> dict[str, str]:
    """What a node's job is told about the gang (SkyPilot's names and costsched's)."""
    addresses = "\n".join(ips or [LOOPBACK] * nodes)
    values = {"NODE_RANK": str(rank), "NUM_NODES": str(nodes), "NODE_IPS": addresses,
              "NUM_GPUS_PER_NODE": str(gpus_per_node)}
    return {f"{prefix}_{k}": v for prefix in ("SKYPILOT", "COSTSCHED") for k, v in values.items()}


def write_node(path: Path, doc: dict) -> None:
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(doc))
    os.replace(temp, path)


def read_json(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def ranks(folder: Path) -> list[int]:
    """The ranks other than 0 that have a node folder under the instance's."""
    try:
        names = os.listdir(folder / NODES)
    except OSError:
        return []
    return sorted(int(n) for n in names if n.isdigit())


def node_ended(folder: Path) -> dict:
    """A node's status.json once its job ended ({} while it runs or has none)."""
    status = read_json(folder / "status.json")
    return status if status.get("state", "running") != "running" else {}


def lost_reason(rank: int, status: dict) -> dict:
    """How node `rank` was lost: preempted (its agent gone without an end, or killed) or
    failed (its job exited with an error)."""
    if status.get("state") == "failed":
        return {"rank": rank, "state": "failed",
                "detail": f"node {rank} failed: {status.get('detail', '')}".rstrip(": ")}
    return {"rank": rank, "state": "preempted", "detail": f"node {rank} was preempted"}


def signal_group(pgid: int | None, signum: int) -> None:
    if pgid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def wait_until(done: Any, seconds: float, step: float = 0.05) -> bool:
    """Poll `done()` for up to `seconds`; whether it became true."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)
    return True


# --- the launcher's side (launchers.local calls these) -----------------------------------

def start_nodes(launcher: Spawner, instance_id: str, folder: Path, spec: LaunchSpec,
                nodes: int) -> None:
    """Agents for ranks 1 .. nodes-1, each in its node folder (one already started by
    an interrupted launch of this attempt is kept)."""
    for rank in range(1, nodes):
        where = node_folder(folder, rank)
        where.mkdir(parents=True, exist_ok=True)
        if read_json(where / NODE).get("pid") is not None:
            continue
        envs = node_envs(rank, nodes, spec.offering.gpu_count)
        child = launcher._spawn(where, spec, envs, publish=False)
        launcher._children[f"{instance_id}/{rank}"] = child
        stat = proc_stat(child.pid)
        write_node(where / NODE, {"pid": child.pid,
                                  "start_time": stat.start_time if stat else None})


def end_nodes(launcher: Spawner, instance_id: str, folder: Path, grace: float) -> None:
    """End every node but rank 0: SIGTERM, then SIGKILL after `grace` seconds."""
    for rank in ranks(folder):
        key = f"{instance_id}/{rank}"
        record = read_json(node_folder(folder, rank) / NODE)
        if launcher._alive(key, record):
            signal_group(record.get("pid"), signal.SIGTERM)
            launcher._end(key, record, grace)


def gang_state(launcher: Spawner, instance_id: str, folder: Path, record: dict,
               state: str, detail: str) -> tuple[str, str, bool]:
    """A gang's state from rank 0's (`state`, `detail`) and its other nodes' (see
    this module's docstring); True when the gang was broken now and must be read again."""
    lost = read_json(folder / NODE_LOST)
    started = record.get("pid") is not None  # else a launch that failed as a whole
    if not lost and started and state in ("running", "failed"):
        lost = lost_node(launcher, instance_id, folder)
        if lost:
            write_node(folder / NODE_LOST, lost)
            if state == "running":  # rank 0 checkpoints on SIGTERM, then all end
                launcher.request_stop(instance_id)
                launcher._end(instance_id, read_json(folder / "instance.json"),
                              launcher.grace_seconds)
                end_nodes(launcher, instance_id, folder, launcher.grace_seconds)
                return state, detail, True
    if state not in ("pending", "running"):  # rank 0 ended: no node outlives it
        end_nodes(launcher, instance_id, folder, launcher.grace_seconds)
    if lost and state in ("running", "stopped", "failed", "preempted"):
        return lost["state"], f"{lost['detail']}; the gang was ended ({detail})", False
    return state, detail, False


def lost_node(launcher: Spawner, instance_id: str, folder: Path) -> dict:
    """The first node other than rank 0 that is gone without succeeding ({} if none)."""
    for rank in ranks(folder):
        where = node_folder(folder, rank)
        record = read_json(where / NODE)
        if record.get("pid") is None or launcher._alive(f"{instance_id}/{rank}", record):
            continue
        ended = node_ended(where)
        if ended.get("state") != "succeeded":
            return lost_reason(rank, ended)
    return {}
