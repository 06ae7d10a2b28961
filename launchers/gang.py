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
from pathlib import Path
from typing import Any

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


SIGTERM, SIGKILL = signal.SIGTERM, signal.SIGKILL
