"""What an import of prices does to jobs already run: a price dated back to when a job
ran charges its hours from then at that price (`costs.charge`: the stored prices of their
time), so that the import re-prices jobs that ended or are running. `prices import` says
how many and by how much their cost changes, in one line, from the same charges `status`
and `report` read, before and after the prices are stored."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

from costsched.amounts import NOISE, usd
from costsched.store import PriceStore
from costsched.store.job_rows import PlacementRow
from costsched.vocabulary import counted

_KEY = ["cloud", "region", "instance_type", "market"]


@dataclass(frozen=True)
class Repriced:
    """The jobs an import re-prices (`jobs`: how many, `running` of them still running)
    and the change of their cost in all, in USD (`usd`: after less before)."""

    jobs: int = 0
    usd: float = 0.0
    running: int = 0

    def line(self) -> str | None:
        """'re-prices 2 jobs already run (1 of them running): their cost changes by
        -$0.00010'; None when it re-prices none."""
        if not self.jobs:
            return None
        sign = "+" if self.usd > 0 else ""
        whose = "its" if self.jobs == 1 else "their"
        running = "" if not self.running else " (running)" if self.jobs == 1 else (
            f" ({self.running:,} of them running)")
        return (f"re-prices {counted(self.jobs, 'job')} already run{running}: {whose} cost "
                f"changes by {sign}{usd(self.usd)}")


class Touched:
    """The placements an import's `observations` can re-price (of their offering, in their
    region and market, running at or after the first of their prices), their jobs' nodes,
    and the time they are charged up to; read before the prices are stored."""

    def __init__(self, store: PriceStore, observations: pd.DataFrame, now: datetime) -> None:
        self.now = now
        self.rows: list[PlacementRow] = []
        self.nodes: dict[int, int] = {}
        if observations.empty:
            return
        placed = store.jobs.placement_rows(None)  # none in a store without jobs: no more
        if not placed:
            return
        first = observations.groupby(_KEY, sort=False)["effective_at"].min()
        since = {key: pd.Timestamp(at) for key, at in first.items()}
        for p in placed:
            at = since.get((p.cloud, p.region, p.instance_type, p.market))
            if at is not None and (p.end_at is None or pd.Timestamp(p.end_at) > at):
                self.rows.append(p)
        if self.rows:
            from costsched.service.jobs.runs import nodes_of

            records = store.jobs.records(sorted({p.job_id for p in self.rows}))
            self.nodes = {r.id: nodes_of(r.spec) for r in records}

    def charges(self, store: PriceStore) -> dict[int, float]:
        """Each touched job's charge of its touched placements, by id, at the prices the
        store holds now (`costs.charge`, as `status` and `report` charge them)."""
        from costsched import costs

        if not self.rows:
            return {}
        out: dict[int, list[float]] = {}
        charged = costs.charge(store, self.rows, now=self.now, nodes=self.nodes)
        for p, (_, spent, _) in zip(self.rows, charged, strict=True):
            out.setdefault(p.job_id, []).append(spent)
        return {job: math.fsum(v) for job, v in out.items()}


def repriced(touched: Touched, before: dict[int, float], after: dict[int, float]
             ) -> Repriced:
    """The jobs of `touched` whose charge changed between `before` and `after` (each a
    job's charge by id, `Touched.charges`), and the change in all."""
    changes = _changes(before, after)
    if not changes:
        return Repriced()
    running = {p.job_id for p in touched.rows if p.end_at is None}
    return Repriced(len(changes), math.fsum(changes.values()), len(running & set(changes)))


def _changes(before: dict[int, float], after: dict[int, float]) -> dict[int, float]:
    out = {}
    for job in sorted(set(before) | set(after)):
        was, now = before.get(job, 0.0), after.get(job, 0.0)
        if all(v == v for v in (was, now)) and abs(now - was) >= NOISE:
            out[job] = now - was
    return out
