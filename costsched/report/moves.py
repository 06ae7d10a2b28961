"""The report's moves: the migrations and recoveries started in its period, each with the
time it billed without training (its idle intervals, charged with the report's pieces),
the egress of its checkpoint's copy, and its price as decided."""

from __future__ import annotations

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.store import PriceStore
from costsched.store.moves import MoveRecord
from costsched.vocabulary import offering_label

MOVE_KINDS = ("migration", "recovery", "start")  # a launch is not a move between offerings
PRICED = ["priced_total_usd", "priced_egress_usd", "priced_restart_usd", "priced_lost_work_usd",
          "priced_overlap_usd"]
MOVE_COLUMNS = ["move_id", "job_id", "name", "kind", "state", "at", "source", "target",
                "idle_usd", "egress_usd", "usd", *PRICED]


def move_table(job_moves: dict[int, list[MoveRecord]], jobs: pd.DataFrame,
               placed: pd.DataFrame, egress: pd.DataFrame, start: pd.Timestamp | None,
               end: pd.Timestamp, ran: dict[int, pd.Timestamp]
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The migrations and recoveries started in the period (MOVE_COLUMNS but idle_usd and
    usd), and their idle intervals (placement frame with the row of their `move`).

    Their idle USD (part of the compute spend, not added to it) is what was billed without
    training: a migration's source from the stop request to its end, and the target from
    its launch until it ran (until `end` while it has not). Egress: the checkpoint's copy
    into the target."""
    names = dict(zip(jobs["id"], jobs["name"], strict=True))
    moves = _in_period(job_moves, start, end)
    # A job's placement on an instance: its last one there.
    on_instance = {(j, i): row for j, i, row in zip(
        placed["job_id"], placed["instance"], placed.to_dict("records"), strict=True)}
    copied = egress.groupby("to_placement")["usd"].sum()
    rows, idle = [], []
    for n, move in enumerate(moves):
        source, target = (on_instance.get((move.job_id, i)) if i else None
                          for i in (move.source_instance, move.target_instance))
        created = pd.Timestamp(move.created_at)
        if move.kind == "migration" and source is not None:
            idle.append({**_clip(source, created, end), "move": n})
        if target is not None:
            idle.append({**_clip(target, target["start_at"], ran.get(move.id, end)),
                         "move": n})
        out = float(copied.get(target["id"], 0.0)) if target is not None else 0.0
        rows.append((move.id, move.job_id, names[move.job_id], move.kind, move.state,
                     created, _where(source), _where(target), np.nan, out, np.nan,
                     *_priced(move)))
    frame = pd.DataFrame(rows, columns=MOVE_COLUMNS)
    frame["at"] = pd.to_datetime(frame["at"], utc=True)
    idle_frame = pd.DataFrame(idle, columns=[*placed.columns, "move"])
    for column in ("start_at", "end_at"):
        idle_frame[column] = pd.to_datetime(idle_frame[column], utc=True)
    return frame.astype({"idle_usd": float, "egress_usd": float, "usd": float,
                         **dict.fromkeys(PRICED, float)}), idle_frame


def _priced(move: MoveRecord) -> tuple[float, ...]:
    """The move's price as decided (total, egress, restart, lost work, overlap) when the
    candidate it runs on (or tries now) is the one that price was for; else NaNs."""
    tried = move.candidates[min(move.tried, len(move.candidates) - 1)] if move.candidates \
        else {}
    priced = tried.get("move") if isinstance(tried, dict) else None
    if not isinstance(priced, dict):
        return (np.nan,) * len(PRICED)
    return tuple(float(priced.get(k, np.nan)) for k in (
        "total_usd", "egress_usd", "restart_usd", "lost_work_usd", "overlap_usd"))


def _in_period(job_moves: dict[int, list[MoveRecord]], start: pd.Timestamp | None,
               end: pd.Timestamp) -> list[MoveRecord]:
    """The migrations and recoveries started in [start, end]."""
    return [m for found in job_moves.values() for m in found
            if m.kind in MOVE_KINDS and pd.Timestamp(m.created_at) <= end
            and (start is None or pd.Timestamp(m.created_at) >= start)]


def target_running_times(store: PriceStore, job_moves: dict[int, list[MoveRecord]],
                          start: pd.Timestamp | None, end: pd.Timestamp
                          ) -> dict[int, pd.Timestamp]:
    """When each move in the period reached target_running, from the jobs' event logs."""
    job_ids = {m.job_id for m in _in_period(job_moves, start, end)}
    if not job_ids:
        return {}
    events = store.jobs.events_of(job_ids, kinds=("move",))
    events = events[events["to_state"] == "target_running"]
    out = {}
    for at, detail in zip(events["at"], events["detail"], strict=True):
        head = str(detail).split(" ", 2)  # "move 12 (migration): ..."
        if len(head) > 1 and head[0] == "move" and head[1].isdigit():
            out.setdefault(int(head[1]), pd.Timestamp(at))
    return out


def _clip(placement: dict, lo: pd.Timestamp, hi: pd.Timestamp) -> dict:
    """The placement over [lo, hi] within its own interval (empty when they do not meet)."""
    end = placement["end_at"] if pd.notna(placement["end_at"]) else hi
    begin = max(placement["start_at"], lo)
    return {**placement, "start_at": begin, "end_at": max(begin, min(end, hi))}


def _where(placement: dict | None) -> str:
    if placement is None:
        return ""
    return offering_label(placement["cloud"], placement["region"], placement["zone"],
                          placement["instance_type"], placement["market"])
