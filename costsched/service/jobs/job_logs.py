"""A job's output: as it comes (`follow`), on its current instance (`logs`), and on every
instance it ran on, each under a line saying how that instance came and ended
(`every_log`)."""

from __future__ import annotations

import inspect
import re
import time
from collections.abc import Iterator

from costsched.migration.launcher import Launcher
from costsched.model import RECOVERY_NOTE, InvalidInput
from costsched.service.jobs.runs import job_ids, nodes_of
from costsched.service.jobs.stories import STATE_EVENT, instance_stories
from costsched.service.jobs.watch import reconcile
from costsched.store import PriceStore


def follow(store: PriceStore, launcher: Launcher, job: int | str, *, poll: float = 1.0,
           tail: int = 1000) -> Iterator[str]:
    """The job's output as it comes, from its current instance on, then each instance a
    recovery or move starts, until the job has ended. Its jobs are reconciled meanwhile, as
    `status` does, so that the job's end is seen."""
    job_id = job_ids(store, job, states=())[0]
    followed, seen = None, []  # the index of the instance followed, its last lines shown
    while True:
        reconcile(store, launcher)
        final = store.jobs.get(job_id).final  # before the last reads: nothing is missed
        order = list(dict.fromkeys(store.jobs.placements(job_id)["instance"].astype(str)))
        if followed is None and order:
            followed = len(order) - 1
            yield f"--- instance {order[followed]}\n"
        while followed is not None:
            lines = launcher.logs(order[followed], tail=tail).splitlines(keepends=True)
            fresh = _new_lines(seen, lines)
            if fresh:
                yield "".join(fresh)
            seen = lines
            if followed + 1 >= len(order):
                break
            followed, seen = followed + 1, []  # a newer instance: read the old one to its end
            yield f"--- instance {order[followed]}\n"
        if final:
            return
        time.sleep(poll)


def _new_lines(seen: list[str], lines: list[str]) -> list[str]:
    """The lines of `lines` after those already seen (the window may have scrolled)."""
    for dropped in range(len(seen) + 1):
        kept = len(seen) - dropped
        if lines[:kept] == seen[dropped:]:
            return lines[kept:]
    return lines


def every_log(store: PriceStore, launcher: Launcher, job: int | str, tail: int = 200,
              node: int | None = None) -> str:
    """The job's output on every instance it ran on, oldest first, each instance's last
    `tail` lines under a '--- instance ID (how it came and ended)' line (`_stories`); a
    gang's, every node's of every round (a node lost and replaced: both), each under a
    '--- instance ID, node N' line, where the launcher keeps them apart (`node_logs`).
    `node`: only that node's (its rank), on every instance and in every round."""
    job_id = job_ids(store, job, states=())[0]
    record = store.jobs.get(job_id)
    nodes = nodes_of(record.spec)
    if node is not None and node >= nodes:
        raise InvalidInput(f"--node {node}: job {job_id} has "
                           + ("1 node (0)" if nodes == 1 else f"{nodes} nodes (0 to {nodes - 1})"))
    placed = store.jobs.placement_rows([job_id])
    stories = instance_stories(placed, store.moves.of_jobs([job_id]).get(job_id, []),
                               record, store.jobs.event_rows([job_id],
                                                             [RECOVERY_NOTE, STATE_EVENT]))
    out = []
    for instance in dict.fromkeys(str(p.instance) for p in placed):
        parts = _node_logs(launcher, instance, nodes, tail)
        if node and not parts:  # a gang whose nodes' output the launcher does not keep apart
            raise InvalidInput(f"job {job_id}: the {launcher.name} launcher keeps one log per "
                               "job; --node is for the local launcher's multi-node jobs")
        if node is not None and parts:
            parts = [(said, text) for said, text in parts if _rank(said) == node]
        elif len(parts) < 2:  # one node: its output under the instance's line
            parts = [("", launcher.logs(instance, tail=tail))]
        for n, (said, text) in enumerate(parts):  # the instance's story on its first line
            out += [f"--- instance {instance}{', ' + said if said else ''}"
                    f"{'' if n else f' ({stories[instance]})'}\n",
                    text if text.endswith("\n") or not text else text + "\n"]
    return "".join(out)


def _rank(said: str) -> int | None:
    """The rank a node's line names ('node 1, lost in round 1': 1)."""
    found = re.match(r"node (\d+)\b", said)
    return int(found[1]) if found else None


def _node_logs(launcher: Launcher, instance: str, nodes: int, tail: int
               ) -> list[tuple[str, str]]:
    """Each node's output on a gang's instance, as (which node, its lines): the launcher's
    `node_logs` (every round's), else its log of each rank where it keeps one per node;
    [] where it keeps one log per job."""
    if nodes < 2:
        return []
    every = getattr(launcher, "node_logs", None)
    if every is not None:
        return every(instance, tail=tail)
    if "node" not in inspect.signature(launcher.logs).parameters:
        return []
    out = []
    for rank in range(nodes):
        try:
            text = launcher.logs(instance, tail=tail, node=rank)  # type: ignore[call-arg]
        except InvalidInput as exc:  # a node the backend has no output of
            text = f"(no output: {exc})\n"
        out.append((f"node {rank}", text))
    return out


def logs(store: PriceStore, launcher: Launcher, job: int | str, tail: int = 200,
         node: int = 0) -> str:
    """The job's output on its current (or last) instance; `node`: on that node of a
    multi-node job (its rank)."""
    job_id = job_ids(store, job, states=())[0]
    placements = store.jobs.placements(job_id)
    if placements.empty:
        return ""
    instance = str(placements["instance"].iloc[-1])
    if not node:
        return launcher.logs(instance, tail=tail)
    if "node" not in inspect.signature(launcher.logs).parameters:
        raise InvalidInput(f"job {job_id}: the {launcher.name} launcher keeps one log per "
                           "job; --node is for the local launcher's multi-node jobs")
    return launcher.logs(instance, tail=tail, node=node)  # type: ignore[call-arg]
