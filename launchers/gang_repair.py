"""A gang that lost nodes while rank 0 runs, repaired where it is: the local launcher's
`repair_nodes` (asked under the job's lease).

1. the gang's round is paused (`launchers.gang_agent`): every node still running stops its
   job, rank 0's checkpointing on SIGTERM, its agent publishing what it wrote;
2. each lost node is replaced where it was (the same offering and zone: its node folder,
   the old one kept aside as nodes/<rank>.lost-<round>); the replacement fetches the code,
   runs setup and restores the newest checkpoint while the others wait, then says it is
   ready;
3. once every node still running has paused and every replacement is ready, the next
   round begins: every node, kept or new, restarts the job from the newest checkpoint
   with the new round's addresses.

Each call does what can be done then and returns (the pause is waited for, a grace period
at most; a replacement's setup is not): the next reconcile pass calls again, and a repair
cut short (costsched stopped) is carried on from the paused round. The job never runs
twice: no node starts the next round before every node has left the last. A replacement
that cannot start there (no capacity: simulated by NO_CAPACITY in the instance's folder)
ends the gang as preempted, and the job moves where N nodes fit, as after any preemption;
so does a gang that does not pause in time, or a replacement not ready after
READY_SECONDS. A replacement whose setup fails fails the gang, as a failing node does. N
agents at most are alive throughout: the lost node's is gone before its replacement
starts.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from costsched.model import GANG_RESUMES
from launchers import gang
from launchers.base import CapacityError, LaunchSpec

_PAUSE_MARGIN = 5.0  # seconds beyond the grace period (and a kill) for a round to pause
_KILL_WAIT = 10.0
# How long the nodes kept wait for a replacement to be set up before the gang is ended and
# the job recovered elsewhere (a move would set up every node; one is quicker).
READY_SECONDS = 1800.0


def repair(launcher: gang.Spawner, instance_id: str, folder: Path, record: dict,
           spec: LaunchSpec) -> str:
    """Replace the gang's lost nodes where they were and resume it on N nodes once they
    are set up (the module's doc). Each call does what can be done now: what it did, in one
    line ('' when nothing). CapacityError when a replacement cannot start there: the gang
    was ended."""
    if gang.read_json(folder / gang.NODE_LOST) or not launcher._alive(instance_id, record):
        return ""  # the gang ended (or rank 0 is gone): the job is recovered as a whole
    lost = [r for r, (kind, _) in gang.conditions(launcher, instance_id, folder).items()
            if kind == "lost"]
    doc = gang.read_json(folder / gang.GANG)
    number, paused = int(doc.get("round", 1)), bool(doc.get("paused"))
    if not lost and not paused:
        return ""
    nodes = int(record.get("nodes", 1))
    where = spec.offering.zone or spec.offering.region
    if lost and (folder / gang.NO_CAPACITY).exists():
        names = ", ".join(str(r) for r in lost)
        gang.end_gang(launcher, instance_id, folder, {
            "rank": lost[0], "state": "preempted",
            "detail": f"node {names} was preempted and cannot be replaced in {where} (no "
                      "capacity there): the gang was ended, to move where N nodes fit"})
        raise CapacityError(spec.offering, f"no capacity to replace node {names}")
    if not paused:
        gang.write_round(folder, number, nodes, paused=True)
        doc = gang.read_json(folder / gang.GANG)
    # The lost nodes, and any whose agent is gone otherwise (a node that finished early
    # and stopped waiting): every node runs the next round.
    for rank in sorted({*lost, *_gone(launcher, instance_id, folder)} if lost else ()):
        _retire(gang.node_folder(folder, rank), number)
        gang.start_node(launcher, instance_id, folder, spec, rank, nodes)
    # A repair cut short (costsched stopped) is carried on: the round is still paused,
    # its replacements started.
    replaced = gang.replaced_in(folder, number)
    names = ", ".join(str(r) for r in replaced)
    kept = [0, *(r for r in gang.ranks(folder) if r not in replaced)]
    if not gang.wait_until(lambda: all(_left(launcher, instance_id, folder, r, number)
                                       for r in kept),
                           launcher.grace_seconds + _KILL_WAIT + _PAUSE_MARGIN):
        return _end(launcher, instance_id, folder, replaced, "preempted",
                    f"node {names} was preempted and the gang did not pause in time")
    late = [r for r in _gone(launcher, instance_id, folder) if r not in replaced]
    for rank in late:  # went while the round paused: it must run the next round too
        _retire(gang.node_folder(folder, rank), number)
        gang.start_node(launcher, instance_id, folder, spec, rank, nodes)
    replaced = gang.replaced_in(folder, number)
    ready = {r: _ready(launcher, instance_id, folder, r) for r in replaced}
    broken = [why for why in ready.values() if why not in ("ready", "")]
    if broken:  # its setup failed there: as that error on any node, the gang fails
        return _end(launcher, instance_id, folder, replaced, "failed", broken[0])
    if not all(ready.values()):  # set up and restored while the others wait
        waited = time.time() - float(doc.get("paused_at") or time.time())
        if waited > READY_SECONDS:
            return _end(launcher, instance_id, folder, replaced, "preempted",
                        f"node {names} was preempted and its replacement was not ready "
                        f"after {waited / 60:,.0f} min")
        return (f"node {names} was preempted: replaced in {where}, the other nodes kept; "
                f"{GANG_RESUMES}") if lost else ""
    gang.write_round(folder, number + 1, nodes)
    return (f"node {names} was preempted: replaced in {where}, the other nodes kept; the "
            f"gang resumes from its newest checkpoint (round {number + 1})")


def _end(launcher: gang.Spawner, instance_id: str, folder: Path, replaced: tuple[int, ...],
         state: str, why: str) -> str:
    """End the gang (`state`: preempted, to be recovered, or failed) and say why."""
    gang.end_gang(launcher, instance_id, folder, {
        "rank": replaced[0] if replaced else 0, "state": state,
        "detail": f"{why}: the gang was ended" + (
            ", to be recovered from its newest checkpoint" if state == "preempted" else "")})
    return f"{why}: the gang was ended"


def _gone(launcher: gang.Spawner, instance_id: str, folder: Path) -> list[int]:
    """The nodes but rank 0 whose agent is not alive."""
    return [r for r in gang.ranks(folder) if not launcher._alive(
        f"{instance_id}/{r}", gang.read_json(gang.node_folder(folder, r) / gang.NODE))]


def _ready(launcher: gang.Spawner, instance_id: str, folder: Path, rank: int) -> str:
    """Whether replacement `rank` waits for the next round ("ready"), is still setting up
    (''), or why it cannot run."""
    where = gang.node_folder(folder, rank)
    status = gang.read_json(where / "status.json")
    if launcher._alive(f"{instance_id}/{rank}", gang.read_json(where / gang.NODE)):
        return "ready" if status.get("phase") == "ready" else ""
    ended = gang.node_ended(where)
    return gang.lost_reason(rank, ended)["detail"] if ended.get("state") == "failed" \
        else f"node {rank}'s replacement was lost too"


def _retire(where: Path, number: int) -> None:
    """A lost node's folder, kept aside (its logs) as <rank>.lost-<round>[-n]."""
    target, n = where.with_name(f"{where.name}.lost-{number}"), 1
    while target.exists():
        n += 1
        target = where.with_name(f"{where.name}.lost-{number}-{n}")
    os.replace(where, target)


def _left(launcher: gang.Spawner, instance_id: str, folder: Path, rank: int,
          number: int) -> bool:
    """Whether node `rank` has left round `number`: its job ended, or its agent is gone."""
    where = gang.node_folder(folder, rank)
    key, name = (instance_id, "instance.json") if rank == 0 else \
        (f"{instance_id}/{rank}", gang.NODE)
    if not launcher._alive(key, gang.read_json(where / name)):
        return True
    status = gang.read_json(where / "status.json")
    return status.get("round") == number and status.get("phase") in ("paused", "exited")
