"""The nodes of a gang placement that were not running, so not billed (`node_gaps`): a
flex-start node still waiting for capacity while a peer of its gang runs, or a lost node's
replacement waiting for it. The cloud bills each VM only while it runs; `costs` charges a
gang placement each of its nodes over the placement's span, less these gaps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import NamedTuple

from sqlalchemy import Connection, Engine, insert, select, update

from costsched.store.database import epoch_second, write
from costsched.store.job_placements import runs_detail
from costsched.store.job_rows import _event, _touch, id_chunks
from costsched.store.schema import node_gaps, placements


class NodeGap(NamedTuple):
    """Node `rank` of a gang placement not running over [start, end] (epoch seconds; end
    None while it still is not: to the placement's end)."""

    rank: int
    start: int
    end: int | None


class NodeGaps:
    """The node gaps half of the job store (`JobStore`), in the database of `engine`."""

    engine: Engine

    def node_gaps(self, placement_ids: Iterable[int]) -> dict[int, list[NodeGap]]:
        """The gaps of each of `placement_ids` that has any, by placement id, in one read."""
        wanted = sorted({int(i) for i in placement_ids})
        out: dict[int, list[NodeGap]] = {}
        if not wanted:
            return out
        query = select(node_gaps.c.placement_id, node_gaps.c.rank, node_gaps.c.start_ts,
                       node_gaps.c.end_ts).order_by(node_gaps.c.id)
        with self.engine.connect() as conn:
            for chunk in id_chunks(wanted, node_gaps.c.placement_id):
                for r in conn.execute(query.where(chunk)):
                    out.setdefault(int(r.placement_id), []).append(NodeGap(
                        int(r.rank), int(r.start_ts),
                        None if r.end_ts is None else int(r.end_ts)))
        return out

    def track_nodes(self, job_id: int, instance: str, running: Mapping[int, datetime | None],
                    nodes: int, at: datetime) -> int | None:
        """What the cloud says of the `nodes` nodes of the gang `instance` at `at`: the
        ranks `running`, each since when it began (None: not said, taken as `at`). The
        job's open placement on it is billed per node from when each runs: a waiting one is
        charged from its first node's start, each node not running yet not charged until
        it runs (a gap opened); on one that runs, a node not running any more is not
        charged from `at` until it (its replacement) runs again. Its id, or None when
        nothing changed (idempotent)."""
        ts = epoch_second(at)

        def track(conn: Connection) -> int:
            _touch(conn, job_id, ts)  # the job's row locked first, as every write does
            found = conn.execute(select(placements.c.id, placements.c.start_ts,
                                        placements.c.waiting).where(
                placements.c.job_id == int(job_id), placements.c.instance == instance,
                placements.c.end_ts.is_(None))).first()
            if found is None:
                raise _Unchanged
            pid, start = int(found.id), int(found.start_ts)
            since = {int(r): min(max(ts if s is None else epoch_second(s), start), ts)
                     for r, s in running.items() if 0 <= int(r) < nodes}
            said: list[str] = []
            if found.waiting:
                if not since:
                    raise _Unchanged
                first = min(since.values())
                conn.execute(update(placements).where(placements.c.id == pid).values(
                    start_ts=first, waiting=False))
                said.append(runs_detail(pid, first))
                for rank in range(nodes):
                    if rank not in since or since[rank] > first:
                        end = since.get(rank)
                        _open(conn, pid, rank, first, end)
                        said.append(_gap_detail(pid, rank, first, end))
            else:
                gaps = {int(g.rank): g for g in conn.execute(select(node_gaps).where(
                    node_gaps.c.placement_id == pid, node_gaps.c.end_ts.is_(None)))}
                for rank in range(nodes):
                    gap = gaps.get(rank)
                    if rank in since and gap is not None:
                        end = max(since[rank], int(gap.start_ts))
                        conn.execute(update(node_gaps).where(node_gaps.c.id == gap.id)
                                     .values(end_ts=end))
                        said.append(f"placement {pid}: node {rank} runs: charged from "
                                    f"{_when(end)}")
                    elif rank not in since and gap is None:
                        _open(conn, pid, rank, ts, None)
                        said.append(_gap_detail(pid, rank, ts, None))
            if not said:
                raise _Unchanged
            for line in said:
                _event(conn, job_id, ts, "placement", None, None, line)
            return pid

        try:
            return write(self.engine, track)
        except _Unchanged:
            return None


class _Unchanged(Exception):  # noqa: N818 - undoes a write that changed nothing
    """`track_nodes` found nothing to change: its transaction is rolled back."""


def _open(conn: Connection, placement_id: int, rank: int, start: int, end: int | None
          ) -> None:
    conn.execute(insert(node_gaps).values(placement_id=placement_id, rank=rank,
                                          start_ts=start, end_ts=end))


def _gap_detail(placement_id: int, rank: int, start: int, end: int | None) -> str:
    """The log's line for a node not charged from `start` (to `end`, when known)."""
    until = f" to {_when(end)}" if end is not None else ""
    return f"placement {placement_id}: node {rank} not running: not charged from " \
        f"{_when(start)}{until}"


def _when(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat().replace("+00:00", "Z")
