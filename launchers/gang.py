"""A gang on the local launcher: a job of N nodes runs as N agents, each in a node folder of
its own, with 127.0.0.1 as every node's address.

    base_dir/<job_id>-<attempt>/          node 0 (rank 0): the instance's folder, as for a
                                          job of one node; its agent alone publishes the
                                          checkpoints, and its end is the job's end
    base_dir/<job_id>-<attempt>/nodes/<rank>/   node <rank> (1 .. N-1): node.json (its
                                          agent's pid and start time), its own code/,
                                          checkpoints/ (restored, never published),
                                          job.log, agent.log, status.json
    base_dir/<job_id>-<attempt>/nodes/<rank>.lost-<round>/   a lost node's folder, kept
    base_dir/<job_id>-<attempt>/gang.json   the gang's rounds (launchers.gang_agent)

Every node's job gets SkyPilot's variables (SKYPILOT_NODE_RANK, SKYPILOT_NUM_NODES,
SKYPILOT_NODE_IPS one address a line, SKYPILOT_NUM_GPUS_PER_NODE) and the same as
COSTSCHED_NODE_RANK, COSTSCHED_NUM_NODES, COSTSCHED_NODE_IPS, COSTSCHED_NUM_GPUS_PER_NODE,
so a torchrun-style command runs unchanged; `setup` runs on every node. A job of one node
gets them too (rank 0 of 1, its address 127.0.0.1), as SkyPilot sets them on every task.

Every agent runs its node's job in rounds (`launchers.gang_agent`), from the gang's file
`gang.json` in rank 0's folder. A gang lives and ends as one:

- a launch starts all N agents or none;
- a node taken away while rank 0's agent lives (its agent gone without an end) leaves the
  instance running, its `lost` nodes said, until the launcher is asked to replace them
  (`launchers.gang_repair`, under the job's lease): the round is paused (rank 0's job
  checkpoints on SIGTERM and its agent publishes), a new agent is started in the lost
  node's folder, and the next round begins on N nodes once it is set up (`replacing`
  until then); the nodes still running are kept;
- a node whose job fails by itself (and no node lost) fails the gang, as the same error
  on rank 0 would; rank 0 is asked to stop, then every node is ended. Which way the gang
  ended is kept in NODE_LOST, so that every later read says the same;
- rank 0's job that exits 0 is the job's end: the nodes still running are ended. A node
  lost before that end and not replaced (rank 0 finished before costsched looked) did not
  run the job to its end: the gang fails, its `lost` nodes said.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from launchers import gang_agent
from launchers.gang_agent import GANG
from launchers.json_files import read_json
from launchers.procfs import proc_stat

if TYPE_CHECKING:
    import subprocess

    from launchers.base import LaunchSpec


class Spawner(Protocol):
    """What a gang needs of its launcher (the local one): an agent started in a folder,
    and the children it keeps."""

    _children: dict[str, subprocess.Popen]

    grace_seconds: float

    def _spawn(self, folder: Path, spec: LaunchSpec, node_envs: dict[str, str],
               publish: bool, gang_file: Path | None = None,
               rank: int = 0) -> subprocess.Popen: ...

    def _alive(self, instance_id: str, record: dict) -> bool: ...

    def _end(self, instance_id: str, record: dict, grace: float) -> None: ...

    def request_stop(self, instance_id: str) -> None: ...


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
NODE_LOST = "node-lost"  # in the instance folder: the gang's end as decided (JSON)
NO_CAPACITY = "no-capacity"  # in the instance folder: no replacement node can start there
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
    """What a node's job is told about the gang (SkyPilot's names and costsched's): every
    job's, a job of one node's too (rank 0 of 1), on every launcher."""
    addresses = "\n".join(ips or [LOOPBACK] * nodes)
    values = {"NODE_RANK": str(rank), "NUM_NODES": str(nodes), "NODE_IPS": addresses,
              "NUM_GPUS_PER_NODE": str(gpus_per_node)}
    return {f"{prefix}_{k}": v for prefix in ("SKYPILOT", "COSTSCHED") for k, v in values.items()}


_RETIRED = re.compile(r"(\d+)\.lost-(\d+)(?:-(\d+))?")  # `gang_repair._retire`'s names


def node_folders(folder: Path) -> list[tuple[str, Path]]:
    """Every node folder of the gang's life, rank by rank, each rank's lost nodes first
    (the rounds they ran until lost, kept aside by a repair) then the node it has now:
    (what it was, in words, its folder)."""
    try:
        names = os.listdir(folder / NODES)
    except OSError:
        names = []
    lost: dict[int, list[tuple[int, int, str]]] = {}
    for name in names:
        found = _RETIRED.fullmatch(name)
        if found:
            rank, number, n = int(found[1]), int(found[2]), int(found[3] or 1)
            lost.setdefault(rank, []).append((number, n, name))
    out = [("node 0", folder)]
    at_end = read_json(folder / NODE_LOST).get("lost") or []  # lost, never replaced
    last = read_json(folder / GANG).get("round", 1)
    for rank in sorted({*ranks(folder), *lost}):
        gone = sorted(lost.get(rank, []))
        out += [(f"node {rank}, lost in round {number}", folder / NODES / name)
                for number, _, name in gone]
        if rank in ranks(folder):
            late = rank in at_end and gone and gone[-1][0] == last  # still setting up
            said = (", replacement not running before the end" if late else
                    f", lost in round {last}, not replaced" if rank in at_end else
                    f", replaced, from round {gone[-1][0] + 1}" if gone else "")
            out.append((f"node {rank}{said}", node_folder(folder, rank)))
    return out


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

def start_gang(launcher: Spawner, instance_id: str, folder: Path, spec: LaunchSpec,
               nodes: int) -> None:
    """The gang's first round, then agents for ranks 1 .. nodes-1, each in its node folder
    (one already started by an interrupted launch of this attempt is kept)."""
    if not (folder / GANG).exists():
        write_round(folder, 1, nodes)
    for rank in range(1, nodes):
        if read_json(node_folder(folder, rank) / NODE).get("pid") is None:
            start_node(launcher, instance_id, folder, spec, rank, nodes)


def write_round(folder: Path, number: int, nodes: int, paused: bool = False) -> None:
    """The gang's file (`launchers.gang_agent`): round `number`, every node's address;
    when `paused`, since when."""
    gang_agent.write(folder / GANG, {"round": number, "paused": paused, "nodes": nodes,
                                     "ips": [LOOPBACK] * nodes,
                                     "paused_at": time.time() if paused else None})


def start_node(launcher: Spawner, instance_id: str, folder: Path, spec: LaunchSpec,
               rank: int, nodes: int) -> None:
    """An agent for node `rank` (not 0) in its node folder."""
    where = node_folder(folder, rank)
    where.mkdir(parents=True, exist_ok=True)
    envs = node_envs(rank, nodes, spec.offering.gpu_count)
    child = launcher._spawn(where, spec, envs, publish=False, gang_file=folder / GANG,
                            rank=rank)
    launcher._children[f"{instance_id}/{rank}"] = child
    stat = proc_stat(child.pid)
    gang_agent.write(where / NODE, {"pid": child.pid,
                                    "start_time": stat.start_time if stat else None})


def end_nodes(launcher: Spawner, instance_id: str, folder: Path, grace: float) -> None:
    """End every node but rank 0: SIGTERM, then SIGKILL after `grace` seconds."""
    for rank in ranks(folder):
        key = f"{instance_id}/{rank}"
        record = read_json(node_folder(folder, rank) / NODE)
        if launcher._alive(key, record):
            signal_group(record.get("pid"), signal.SIGTERM)
            launcher._end(key, record, grace)


def end_gang(launcher: Spawner, instance_id: str, folder: Path, verdict: dict) -> None:
    """Decide the gang's end (`verdict`: its state and detail, kept in NODE_LOST), then
    ask rank 0 to stop (its job checkpoints on SIGTERM, its agent publishes) and end every
    node."""
    gang_agent.write(folder / NODE_LOST, verdict)
    launcher.request_stop(instance_id)
    launcher._end(instance_id, read_json(folder / "instance.json"), launcher.grace_seconds)
    end_nodes(launcher, instance_id, folder, launcher.grace_seconds)


@dataclass(frozen=True)
class GangView:
    state: str
    detail: str
    again: bool = False  # the gang was ended just now: read it again
    lost: tuple[int, ...] = ()  # nodes preempted while the others wait for their replacement
    replacing: tuple[int, ...] = ()  # nodes replaced, the gang waiting for them (paused)
    exit_code: bool = True  # rank 0's exit code is the gang's (not when a lost node failed it)
    # Else the gang's, where another node's failure ended it: that node's (None: not known).
    node_exit: int | None = None


def _ended(detail: str) -> str:
    """'the gang was ended', with what rank 0 said when it said something."""
    return f"the gang was ended ({detail})" if detail else "the gang was ended"


def gang_state(launcher: Spawner, instance_id: str, folder: Path, record: dict,
               status: dict, state: str, detail: str) -> GangView:
    """A gang's state from rank 0's (`state`, `detail`, its `status`) and its other
    nodes' (see this module's docstring)."""
    verdict = read_json(folder / NODE_LOST)
    started = record.get("pid") is not None  # else a launch that failed as a whole
    if not verdict and started and state == "succeeded":
        verdict = _finished(launcher, instance_id, folder, detail)
        gang_agent.write(folder / NODE_LOST, verdict)  # before its nodes are ended below
    if not verdict and started and state in ("running", "failed"):
        current = read_json(folder / GANG)
        if current.get("paused") and state == "running":  # being repaired: not judged
            replacing = replaced_in(folder, current.get("round", 1))
            return GangView("running", "the gang is paused while node "
                            f"{', '.join(map(str, replacing))} is replaced",
                            replacing=replacing)
        nodes = conditions(launcher, instance_id, folder, current.get("round"))
        lost = tuple(r for r, (kind, _) in nodes.items() if kind == "lost")
        if lost and state == "running":  # rank 0 lives: the node is replaced (`repair`)
            paused = " (the gang is paused)" if status.get("phase") == "paused" else ""
            return GangView("running", f"node {lost[0]} was preempted: its replacement is "
                            f"awaited{paused}", lost=lost)
        failed = [(r, why) for r, (kind, why) in nodes.items() if kind == "failed"]
        if lost:
            verdict = {"rank": lost[0], "state": "preempted",
                       "detail": f"node {lost[0]} was preempted; {_ended(detail)}"}
        elif failed:
            verdict = {"rank": failed[0][0], "state": "failed",
                       "detail": f"{failed[0][1]}; {_ended(detail)}"}
        elif state == "running" and _failed_in(status, current.get("round")):
            # rank 0's job failed by itself
            verdict = {"rank": 0, "state": "failed", "detail": str(status.get("detail", ""))}
        elif state == "failed":
            verdict = {"rank": 0, "state": "failed", "detail": detail}
        if verdict:
            if state == "running":
                end_gang(launcher, instance_id, folder, verdict)
                return GangView(state, detail, again=True)
            gang_agent.write(folder / NODE_LOST, verdict)
    if state not in ("pending", "running"):  # rank 0 ended: no node outlives it
        end_nodes(launcher, instance_id, folder, launcher.grace_seconds)
    mended = "lost" in verdict  # rank 0's exit 0 did not end it well: not the gang's code
    # Another node's failure ended it: that node's exit code, not rank 0's (SIGTERM's).
    failed = verdict.get("state") == "failed" and verdict.get("rank", 0) != 0 and not mended
    code = read_json(node_folder(folder, verdict["rank"]) / "status.json").get(
        "exit_code") if failed else None
    code = code if isinstance(code, int) else None
    if verdict and state in ("running", "stopped", "failed", "preempted", "succeeded"):
        return GangView(verdict["state"], verdict["detail"],
                        lost=tuple(verdict["lost"]) if mended else (),
                        exit_code=not (mended or failed), node_exit=code)
    return GangView(state, detail, exit_code=not (mended or failed), node_exit=code)


def _finished(launcher: Spawner, instance_id: str, folder: Path, detail: str) -> dict:
    """The gang's end when rank 0's job exited 0, judged once, before the nodes still
    running are ended: a success, unless a node was lost before that end and not replaced
    (its agent gone without an end, or replaced while a pause that never reached rank 0
    waits for it; said in `lost`). That node's job did not run to the end: the gang fails,
    not recovered (rank 0's job is done) and not taken for a clean success. A node whose job
    failed is not judged here: it may have failed as rank 0 went away, after the end."""
    current = read_json(folder / GANG)
    number = current.get("round", 1)
    lost = {r for r, (kind, _) in conditions(launcher, instance_id, folder, number).items()
            if kind == "lost"}
    if current.get("paused"):  # rank 0 exited before the pause reached it (else it waits)
        lost |= set(replaced_in(folder, number))
    if not lost:
        return {"rank": 0, "state": "succeeded", "detail": detail}
    names = ", ".join(str(r) for r in sorted(lost))
    return {"rank": min(lost), "state": "failed", "lost": sorted(lost),
            "detail": f"node {names} was preempted and not replaced before rank 0's job "
                      f"exited 0: node {names}'s job did not run to its end; "
                      f"{_ended('')}"}


def _failed_in(status: dict, number: object) -> bool:
    """Whether a node's status says its job failed by itself in round `number` (an exit
    of an earlier round was that round's end)."""
    return (status.get("phase") == "exited" and status.get("outcome") == "failed"
            and status.get("round") == number)


def conditions(launcher: Spawner, instance_id: str, folder: Path,
               number: object = None) -> dict[int, tuple[str, str]]:
    """Each node but rank 0 that is not fine, by rank: ("lost", why) when its agent is gone
    without succeeding (preempted, or ended), ("failed", why) when its job failed (by
    itself in round `number`, the gang's current one)."""
    found = {}
    for rank in ranks(folder):
        where = node_folder(folder, rank)
        record = read_json(where / NODE)
        if record.get("pid") is None:
            continue
        status = read_json(where / "status.json")
        if launcher._alive(f"{instance_id}/{rank}", record):
            if _failed_in(status, number):
                found[rank] = ("failed", f"node {rank} failed: {status.get('detail', '')}")
            continue
        ended = node_ended(where)
        if ended.get("state") == "failed":
            found[rank] = ("failed", lost_reason(rank, ended)["detail"])
        elif ended.get("state") != "succeeded":
            found[rank] = ("lost", f"node {rank} was preempted")
    return found


def replaced_in(folder: Path, number: int) -> tuple[int, ...]:
    """The nodes replaced while round `number` was paused (their old folders kept)."""
    try:
        names = os.listdir(folder / NODES)
    except OSError:
        return ()
    return tuple(sorted({int(n.split(".")[0]) for n in names
                         if re.fullmatch(rf"[0-9]+\.lost-{number}(-[0-9]+)?", n)}))
