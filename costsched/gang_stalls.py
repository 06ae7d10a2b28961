"""A gang's repairs in place, as spans its measured speed leaves out.

A gang whose node was lost is paused (rank 0 checkpoints), the node is replaced where it
ran and the gang resumes on N nodes, all on one placement (`service.jobs.gangs`). A single
job's recovery starts a new placement, so its measured speed (`measured.speed_rows`: the
steps between a placement's first and last reading over the time between them) never
counts the gap between its two placements; a gang's repair is inside one placement's
readings. Its whole stall, from when the gang last trained (the last step it reported
before the loss, as its NODE_RECOVERY line says it: `last_step_words`; without it, the
loss seen) to the gang's resume (or its end), is left out the same way: the pace is the
pace of training, and a repair is its cost, not a slower GPU.

`trained_readings` reads the store: the readings every measured speed is computed from
(`status`, `report`, the budgets' and the decider's pace, the daemon's flags).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone

from costsched.model import NODE_RECOVERY
from costsched.store import PriceStore
from costsched.store.job_rows import EventRow, PlacementRow

GANG_EVENT = "gang"  # the job log's kind for the rest of a gang's repair (`jobs.gangs`)
KINDS = (NODE_RECOVERY, GANG_EVENT)
NODE_LINE = re.compile(r"instance (\S+): node ([\d, ]+) was ")
RESUMES = "the gang resumes from its newest checkpoint"  # a repair's line, once it resumed
REPAIR_OVER = (RESUMES, "the gang was ended")
# A gang ended because its lost node could not be replaced where it ran (`jobs.gangs`):
# its job is recovered as a whole where N nodes fit.
MOVES = "the gang was ended, to move where its nodes fit"
_NOT_REPLACED = re.compile(r"instance (\S+): (node [\d, ]+ could not be replaced in \S+) \(")
# (a store written by an earlier version: '...: no capacity to replace node 1: the gang
# moves where its nodes fit')
_NOT_REPLACED_BEFORE = re.compile(r"instance (\S+): .*\bno capacity to replace "
                                  r"(node [\d, ]+): the gang moves where its nodes fit")
# The end of a NODE_RECOVERY line: the step the gang reported last before the loss, and
# when it wrote it (its training stopped there: the stall begins).
LAST_STEP = re.compile(r"; it last reported step [\d,]+ at "
                       r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC")


def last_step_words(step: float | None, at: datetime | None, seen: datetime) -> str:
    """What a NODE_RECOVERY line (seen at `seen`) ends with: '; it last reported step 392
    at 2026-11-29 09:00:29 UTC', the step the gang reported last before the loss and when
    it wrote it (its instance's `step`, `step_at`): where its stall begins, before the
    pass that saw the loss. '' where that is not known (or not before `seen`)."""
    if step is None or at is None or at > seen:
        return ""
    return (f"; it last reported step {float(step):,.0f} at "
            f"{at.astimezone(timezone.utc):%Y-%m-%d %H:%M:%S} UTC")


def gang_moves_line(nodes: str, where: str, why: str) -> str:
    """A gang's repair's line (after 'instance ID: ') when its lost nodes `nodes` ('1')
    could not be replaced in `where` (its zone) for `why` (the launcher's reason): 'node 1
    could not be replaced in us-east-1a (no capacity ...): the gang was ended, to move where
    its nodes fit'."""
    why = why.removesuffix(": the gang was ended")
    return f"node {nodes} could not be replaced in {where} ({why}): {MOVES}"


def not_replaced(detail: str) -> tuple[str, str] | None:
    """(the instance, 'node 1 could not be replaced in us-east-1a') of a gang's repair's
    line saying its lost node could not be replaced where it ran (`gang_moves_line`); None
    for any other line."""
    found = _NOT_REPLACED.match(detail)
    if found is not None:
        return found.group(1), found.group(2)
    found = _NOT_REPLACED_BEFORE.match(detail)
    return None if found is None else (found.group(1),
                                       f"{found.group(2)} could not be replaced")


def resumed_note(nodes: str, words: str) -> str:
    """The words of a RECOVERY_NOTE (after 'instance ID: ') for a gang resumed once its
    nodes `nodes` ('1', '1, 2') were replaced in place: 'node 1: ' and the step it resumed
    from, as a single job's recovery says it (`resumed_words`): 'node 1: resumes from
    step 304 (its checkpoint's): no step lost'."""
    return f"node {nodes}: {words}"


def resumes_of(node_events: Iterable[EventRow], notes: Iterable[EventRow]
               ) -> dict[int, EventRow]:
    """Of a job's NODE_RECOVERY events, those whose gang resumed since, by event id: the
    RECOVERY_NOTE of its resume (`resumed_note`, of the same instance and nodes, after it
    and before that instance's next node recovery). A note of a whole gang's recovery
    (its instance lost) is none of them."""
    nodes = sorted(node_events, key=lambda e: e.id)
    notes = sorted(notes, key=lambda e: e.id)
    out: dict[int, EventRow] = {}
    for n, event in enumerate(nodes):
        line = NODE_LINE.match(str(event.detail or ""))
        if line is None:
            continue
        head = f"instance {line.group(1)}: "
        until = next((e.id for e in nodes[n + 1:]
                      if str(e.detail or "").startswith(head)), math.inf)
        mark = head + resumed_note(line.group(2), "resumes from ")
        found = next((e for e in notes if event.id < e.id < until
                      and str(e.detail or "").startswith(mark)), None)
        if found is not None:
            out[event.id] = found
    return out


def stopped_first(node_events: Iterable[EventRow], gang_events: Iterable[EventRow],
                  states: Iterable[EventRow]) -> set[int]:
    """Of a job's NODE_RECOVERY events, the ids of those whose job was stopped before its
    gang resumed (`gang_events`: its repairs' other lines; `states`: its state changes):
    nothing was recovered, so none is counted as a recovery."""
    said = sorted([*node_events, *gang_events], key=lambda e: e.id)
    stops = sorted(e.id for e in states if e.to_state == "stopped")
    out = set()
    for event in said:
        line = NODE_LINE.match(str(event.detail or ""))
        if event.kind != NODE_RECOVERY or line is None:
            continue
        stop = next((i for i in stops if i > event.id), None)
        if stop is None:
            continue
        head = f"instance {line.group(1)}:"
        if not any(event.id <= e.id < stop and str(e.detail or "").startswith(head)
                   and RESUMES in str(e.detail) for e in said):
            out.add(event.id)
    return out


def stopped_first_of(events: Iterable[EventRow], states: Iterable[EventRow]) -> set[int]:
    """`stopped_first` over many jobs: of `events` (their NODE_RECOVERY and gang events),
    the ids of the NODE_RECOVERY events whose job was stopped (`states`: their state
    changes) before its gang resumed."""
    said: dict[int, list[EventRow]] = {}
    for e in events:
        said.setdefault(int(e.job_id), []).append(e)
    stops: dict[int, list[EventRow]] = {}
    for e in states:
        stops.setdefault(int(e.job_id), []).append(e)
    out: set[int] = set()
    for job_id, found in said.items():
        out |= stopped_first([e for e in found if e.kind == NODE_RECOVERY],
                             [e for e in found if e.kind == GANG_EVENT],
                             stops.get(job_id, ()))
    return out


def _stall_start(event: EventRow) -> float:
    """When the stall of the repair `event` began: the time of the gang's last step before
    the loss (`LAST_STEP`), else the event's."""
    found = LAST_STEP.search(str(event.detail or ""))
    seen = event.at.timestamp()
    if found is None:
        return seen
    began = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
    return min(began.timestamp(), seen)


def stalls(events: Sequence[EventRow], placed: Iterable[PlacementRow]
           ) -> dict[int, list[tuple[float, float]]]:
    """Each gang placement's repairs in place (epoch seconds; the end inf while it still
    waits), by placement id, from its job's NODE_RECOVERY and gang events, oldest
    first."""
    on = {(int(p.job_id), str(p.instance)): int(p.id) for p in placed}
    events = sorted(events, key=lambda e: (e.at, e.id))
    out: dict[int, list[tuple[float, float]]] = {}
    for n, event in enumerate(events):
        line = NODE_LINE.match(str(event.detail or ""))
        if event.kind != NODE_RECOVERY or line is None:
            continue
        placement = on.get((int(event.job_id), line.group(1)))
        if placement is None:
            continue
        # Over when the gang resumes (this line says so when the new node was ready at
        # once) or was ended; until then, it waits.
        over = next((e.at for e in events[n:] if e.job_id == event.job_id
                     and str(e.detail or "").startswith(f"instance {line.group(1)}:")
                     and any(words in str(e.detail) for words in REPAIR_OVER)), None)
        out.setdefault(placement, []).append(
            (_stall_start(event), math.inf if over is None else over.timestamp()))
    return out


def stalled_seconds(start: float, end: float, spans: Sequence[tuple[float, float]]) -> float:
    """The seconds of [start, end] inside `spans` (each counted once where they overlap)."""
    total, reach = 0.0, start
    for a, b in sorted(spans):
        a, b = max(a, reach), min(b, end)
        if b > a:
            total += b - a
            reach = b
    return total


def trained(rows: Iterable[tuple], spans: Mapping[int, Sequence[tuple[float, float]]]
            ) -> list[tuple]:
    """Step readings (`JobStore.reading_rows`: id, job_id, first_step, first_ts,
    last_step, last_ts) with each placement's stalls left out of the time between its
    first and last reading: its first reading's time moved later by them."""
    out = []
    for row in rows:
        i, job_id, first_step, first_ts, last_step, last_ts = row
        stalled = stalled_seconds(float(first_ts), float(last_ts), spans.get(int(i), ()))
        out.append((i, job_id, first_step, float(first_ts) + stalled, last_step, last_ts)
                   if stalled > 0 else tuple(row))
    return out


def trained_readings(store: PriceStore, job_ids: Iterable[int] | None) -> list[tuple]:
    """The step readings of `job_ids`' placements (`JobStore.reading_rows`; every job's
    when None) with a gang's repairs in place left out of its training time (`trained`),
    as a single job's recovery is by its new placement."""
    rows = store.jobs.reading_rows(None if job_ids is None else list(job_ids))
    ids = sorted({int(r[1]) for r in rows})
    events = store.jobs.event_rows(ids, kinds=KINDS) if ids else []
    if not any(e.kind == NODE_RECOVERY for e in events):
        return rows
    spans = stalls(events, store.jobs.placement_rows(ids))
    return trained(rows, spans) if spans else rows
