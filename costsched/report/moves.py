"""The report's moves: the migrations, recoveries and starts begun in its period, each
with the time it billed without training (its idle intervals, charged with the report's
pieces), the egress of its checkpoint's copy, and its price as decided; and a gang's nodes
replaced in place (its NODE_RECOVERY events: a recovery without a move, counted with the
recovery moves by `model.recoveries`, but for one its job was stopped in before the gang
resumed), each a row of kind NODE_KIND."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from costsched.costs import Move
from costsched.gang_stalls import KINDS, NODE_LINE, REPAIR_OVER
from costsched.model import GANG_STOPPED_FIRST, NODE_RECOVERY
from costsched.own_budget import moved_by_cap
from costsched.report.lost_work import lost_work_usd, note_for
from costsched.report.sums import group_sums
from costsched.store import PriceStore
from costsched.store.job_rows import EventRow, PlacementRow
from costsched.store.moves import MoveRecord
from costsched.vocabulary import RESTART_MARK, offering_label, restart_move

MOVE_KINDS = ("migration", "recovery", "start")  # a launch is not a move between offerings
NODE_KIND = "node recovery"  # a gang's node replaced where it ran: no move
PRICED = ["priced_total_usd", "priced_egress_usd", "priced_restart_usd", "priced_lost_work_usd",
          "priced_overlap_usd"]
# lost_steps, lost_work_usd: the steps a recovery lost and what training them again cost
# (`lost_work`); NaN where not counted or not priced, and for other moves.
MOVE_COLUMNS = ["move_id", "job_id", "name", "kind", "state", "at", "source", "target",
                "idle_usd", "egress_usd", "usd", "lost_steps", "lost_work_usd", *PRICED]


def move_table(job_moves: Mapping[int, list[MoveRecord]], names: Mapping[int, str],
               placed: Sequence[PlacementRow], egress: Sequence[Move],
               start: datetime | None, end: datetime, ran: Mapping[int, datetime],
               gang: Sequence[EventRow] = (), notes: Sequence[EventRow] = (),
               pace: Mapping[tuple[int, str, int], float] | None = None,
               nodes: Mapping[int, int] | None = None, stopped_first: Collection[int] = ()
               ) -> tuple[list[dict], list[tuple[int, PlacementRow]]]:
    """The migrations and recoveries started in the period (MOVE_COLUMNS, idle_usd and
    usd NaN), and their idle intervals ((row of their move, interval)); with them, in
    each job's order of time, the nodes replaced in place (`gang`: the jobs' gang events,
    `gang_events`), each from the node to the offering it was replaced on, its idle time
    the whole gang's from the loss seen to the gang's resuming (its placement's price for
    its nodes, as the placement is charged), no move id, no egress (no checkpoint left);
    one its job was stopped in before the gang resumed (its event id in `stopped_first`:
    `gang_stalls.stopped_first_of`) is no recovery, and its state says so.

    Their idle USD (part of the compute spend, not added to it) is what was billed without
    training: a migration's source from the stop request to its end, and the target from
    its launch until it ran (until `end` while it has not). Egress: the checkpoint's copy
    into the target. A move's source is the placement it left; a start's (a stopped job
    has none running) is the one its checkpoint was copied from, the job's placement
    before its target: where its egress comes from. A recovery's (and a node's) lost
    work: the steps its RECOVERY_NOTE (of `notes`) counted, priced at the job's measured
    `pace` for its `nodes` (`lost_work`)."""
    moves = _in_period(job_moves, start, end)
    pace, nodes = pace or {}, nodes or {}
    # A job's placement on an instance: its last one there.
    on_instance = {(p.job_id, p.instance): p for p in placed}
    into = group_sums([m.to_placement for m in egress], [m.usd for m in egress])
    by_id = {p.id: p for p in placed}
    # Where each placement's checkpoint came from: the job's placement before it.
    came_from = {m.to_placement: by_id.get(m.from_placement) for m in egress}
    found: list[tuple[tuple, dict, list[PlacementRow]]] = []
    for move in moves:
        source, target = (on_instance.get((move.job_id, i)) if i else None
                          for i in (move.source_instance, move.target_instance))
        if source is None and target is not None:  # a start: nothing ran when it began
            source = came_from.get(target.id)
        created, spans = move.created_at, []
        if move.kind == "migration" and source is not None:
            spans.append(_clip(source, created, end))
        if target is not None:
            spans.append(_clip(target, target.start_at, ran.get(move.id, end)))
        out = into.get(target.id, [0.0])[0] if target is not None else 0.0
        steps = note_for(notes, move.job_id, move.source_instance, created) \
            if move.kind == "recovery" else math.nan
        lost = lost_work_usd(steps, move.job_id, source, target, pace,
                             nodes.get(move.job_id, 1))
        found.append(((move.job_id, created), dict(zip(MOVE_COLUMNS, (
            move.id, move.job_id, names[move.job_id],
            _kind(move), move.state,
            created, _where(source), _where(target), math.nan, out, math.nan, steps, lost,
            *_priced(move)), strict=True)), spans))
    found += _node_rows(gang, names, on_instance, start, end, notes, pace, nodes,
                        stopped_first)
    found.sort(key=lambda f: f[0])  # stable: a job's moves keep their order
    rows, idle = [], []
    for n, (_, row, spans) in enumerate(found):
        rows.append(row)
        idle += [(n, span) for span in spans]
    return rows, idle


def moved_into(job_moves: Mapping[int, list[MoveRecord]], placed: Sequence[PlacementRow]
               ) -> dict[int, tuple[int, str]]:
    """Each placement a move went to, by id: (the move's id, its kind as the moves table
    writes it), so that the egress of a checkpoint's copy names the move that made it."""
    on_instance = {(p.job_id, p.instance): p for p in placed}  # (as `move_table` finds it)
    out = {}
    for moves in job_moves.values():
        for move in moves:
            target = on_instance.get((move.job_id, move.target_instance)) \
                if move.target_instance else None
            if target is not None:
                out[target.id] = (move.id, _kind(move))
    return out


def _kind(move: MoveRecord) -> str:
    """What the move was: its kind, or what made it where its kind says less (a restart
    after the job's own error, a move a budget's cap made: 'move at its own budget's cap',
    as the job's status says it was placed)."""
    if restart_move(move.kind, move.detail):
        return RESTART_MARK
    capped = moved_by_cap(move.detail) if move.kind == "migration" else None
    return f"move at {capped}'s cap" if capped else move.kind


def gang_events(store: PriceStore, job_ids: Sequence[int] | Mapping[int, object]
                ) -> list[EventRow]:
    """The gang events of the jobs of `job_ids` (their nodes replaced in place, and how
    each repair went on), oldest first: what `move_table` lists the node recoveries from."""
    return store.jobs.event_rows(list(job_ids), KINDS) if job_ids \
        else []


def _node_rows(gang: Sequence[EventRow], names: Mapping[int, str],
               on_instance: Mapping[tuple[int, str], PlacementRow],
               start: datetime | None, end: datetime, notes: Sequence[EventRow] = (),
               pace: Mapping[tuple[int, str, int], float] | None = None,
               gang_nodes: Mapping[int, int] | None = None, stopped_first: Collection[int] = ()
               ) -> list[tuple[tuple, dict, list[PlacementRow]]]:
    """The rows of the nodes replaced in place in the period (`move_table`)."""
    out = []
    for n, event in enumerate(gang):
        line = NODE_LINE.match(str(event.detail or ""))
        if event.kind != NODE_RECOVERY or event.job_id not in names or event.at > end \
                or (start is not None and event.at < start) or line is None:
            continue
        instance, nodes = line.group(1), line.group(2).strip()
        placement = on_instance.get((event.job_id, instance))
        # The repair is over when the gang resumes (or was ended); until then, it waits.
        over = next((e.at for e in gang[n:] if e.job_id == event.job_id
                     and str(e.detail or "").startswith(f"instance {instance}:")
                     and any(words in str(e.detail) for words in REPAIR_OVER)), None)
        spans = [] if placement is None else [_clip(placement, event.at, over or end)]
        steps = note_for(notes, event.job_id, instance, event.at, node=nodes)
        lost = lost_work_usd(steps, event.job_id, placement, placement, pace or {},
                             (gang_nodes or {}).get(event.job_id, 1))
        state = GANG_STOPPED_FIRST if event.id in stopped_first \
            else "done" if over is not None else "replacing"
        out.append(((event.job_id, event.at), dict(zip(MOVE_COLUMNS, (
            None, event.job_id, names[event.job_id], NODE_KIND, state, event.at,
            f"node {nodes}", _where(placement), math.nan, 0.0, math.nan, steps, lost,
            *(math.nan,) * len(PRICED)), strict=True)), spans))
    return out


def _priced(move: MoveRecord) -> tuple[float, ...]:
    """The move's price as decided (total, egress, restart, lost work, overlap) when the
    candidate it runs on (or tries now) is the one that price was for; else NaNs."""
    tried = move.candidates[min(move.tried, len(move.candidates) - 1)] if move.candidates \
        else {}
    priced = tried.get("move") if isinstance(tried, dict) else None
    if not isinstance(priced, dict):
        return (math.nan,) * len(PRICED)
    return tuple(float(priced.get(k, math.nan)) for k in (
        "total_usd", "egress_usd", "restart_usd", "lost_work_usd", "overlap_usd"))


def _in_period(job_moves: Mapping[int, list[MoveRecord]], start: datetime | None,
               end: datetime) -> list[MoveRecord]:
    """The migrations and recoveries started in [start, end]."""
    return [m for found in job_moves.values() for m in found
            if m.kind in MOVE_KINDS and m.created_at <= end
            and (start is None or m.created_at >= start)]


def target_running_times(store: PriceStore, job_moves: Mapping[int, list[MoveRecord]],
                         start: datetime | None, end: datetime) -> dict[int, datetime]:
    """When each move in the period reached target_running, from the jobs' event logs."""
    job_ids = {m.job_id for m in _in_period(job_moves, start, end)}
    if not job_ids:
        return {}
    out: dict[int, datetime] = {}
    for event in store.jobs.event_rows(job_ids, kinds=("move",)):
        if event.to_state != "target_running":
            continue
        head = str(event.detail).split(" ", 2)  # "move 12 (migration): ..."
        if len(head) > 1 and head[0] == "move" and head[1].isdigit():
            out.setdefault(int(head[1]), event.at)
    return out


def _clip(placement: PlacementRow, lo: datetime, hi: datetime) -> PlacementRow:
    """The placement over [lo, hi] within its own interval (empty when they do not meet)."""
    end = placement.end_at if placement.end_at is not None else hi
    begin = max(placement.start_at, lo)
    return placement._replace(start_at=begin, end_at=max(begin, min(end, hi)))


def _where(placement: PlacementRow | None) -> str:
    if placement is None:
        return ""
    return offering_label(placement.cloud, placement.region, placement.zone,
                          placement.instance_type, placement.market)
