"""The store's scale for charged figures, one per store: the decimals of its smallest
settled charge (`amounts.store_scale`), or the fewest more at which every finished job's
cost, rounded once from its exact figure, is the sum of its parts as written
(`amounts.adding_scale`). `status`, `status JOB`, `report` (text, --json's written
figures, HTML), `report --job` and the dashboard read it, so that a finished job's cost
reads at the same decimals in each, whatever else is shown; a view widens it only for a
figure still growing or a total of its own (a period's, a subset's).

It is made only when what it is made of changed: the scale made last is kept for the
store between commands (`costsched.kept`, in the user cache directory) with a digest of
what it was made of (`settled_state`, one small read of aggregates), and used while that
is the same; so a command of one job does not charge every finished job again. A view
that has charged its jobs already hands their costs over (`known`): the store's other
finished jobs alone are charged then."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, func, select

from costsched.amounts import Scale, adding_scale, store_scale
from costsched.costs import JobCost, job_costs
from costsched.kept import kept
from costsched.own_budget import checkpoint_gb
from costsched.store import PriceStore
from costsched.store.schema import bookings, jobs, node_gaps, offerings, placements, prices
from costsched.store.scope import store_scope

if TYPE_CHECKING:
    from costsched.store.job_placements import PlacementRow

# A booking in these states cost nothing upfront (it is being bought, or it was not).
UNPAID = ("purchasing", "failed")


def settled_scale(store: PriceStore, now: datetime, *,
                  known: Mapping[int, JobCost] | None = None,
                  placed: Sequence[PlacementRow] | None = None,
                  booked: Mapping[int, Sequence[Any]] | None = None,
                  specs: Mapping[int, dict] | None = None) -> Scale:
    """The store's scale (see the module) from each finished job's compute and its
    placements' charges, its compute and egress, its spend and its whole cost (with
    capacity booked) and their parts as `status` and the dashboard list them, and the
    totals of those columns over the finished jobs; a job with a placement open sets
    nothing (its figures grow), so that the scale changes only when a job finishes (or a
    smaller charge settles).
    `known`: costs the caller charged already (at `now`), by job id; `placed` and
    `booked`: every placement and every job's bookings of the store, where the caller read
    them already (a part of them is no substitute); `specs`: jobs' stored specs read
    already, by id (those of others are read). The scale kept for the store while
    `settled_state` is the same (see the module)."""
    return kept(f"settled-scale-{store_scope(store.engine)}",
                lambda: _made(store, now, known, placed, booked, specs),
                also=(settled_state(store),))


def _made(store: PriceStore, now: datetime, known: Mapping[int, JobCost] | None,
          placed: Sequence[PlacementRow] | None, booked: Mapping[int, Sequence[Any]] | None,
          specs: Mapping[int, dict] | None) -> Scale:
    scale = store_scale(*store.jobs.smallest_settled())
    placed = store.jobs.placement_rows(None) if placed is None else placed
    if not placed:
        return scale
    live = {p.job_id for p in placed if p.end_at is None}
    done = sorted({p.job_id for p in placed} - live)
    known = known or {}
    rest = [j for j in done if j not in known]
    unread = [j for j in rest if j not in (specs or {})]
    specs = {**(specs or {}), **({r.id: r.spec for r in store.jobs.records(unread)}
                                 if unread else {})}
    costs = {**{j: known[j] for j in done if j in known}, **(job_costs(
        store, rest, now=now, checkpoint_gb={j: checkpoint_gb(specs.get(j, {})) for j in rest},
        nodes={j: nodes(specs.get(j, {})) for j in rest}, placements=placed) if rest else {})}
    booked = store.booked.of_jobs(None) if booked is None else booked
    sums: list[tuple[float, list[float]]] = []
    for job in done:
        cost = costs[job]
        parts = [c.usd for c in cost.charged]
        upfront = booked_upfront(booked.get(job, ()))
        moved = [cost.egress_usd] if cost.egress_usd else []
        sums += [(cost.compute_usd, parts),
                 (cost.compute_usd + cost.egress_usd, [cost.compute_usd, cost.egress_usd]),
                 (cost.total_usd, parts + moved),  # the dashboard's spend (nothing booked)
                 (cost.total_usd + upfront, parts + moved + ([upfront] if upfront else []))]
    if done:  # the totals of every finished job (those of a report of every job)
        for column in ("compute_usd", "egress_usd", "total_usd"):
            cells = [float(getattr(costs[j], column)) for j in done]
            sums.append((math.fsum(cells), cells))
    return adding_scale(scale, [(t, p) for t, p in sums if t == t and all(v == v for v in p)])


def settled_state(store: PriceStore) -> str:
    """A digest of what the store's scale is made of, in one small read of aggregates: its
    placements (spans, prices, which are open), its nodes' gaps, bookings, jobs, offerings
    and the prices in effect before the last settled charge ended (one imported later
    changes a finished charge; those collected since do not). Not in it:
    the checkpoints measured in a job's checkpoint store, which its moves' egress reads."""
    p, g, b, j, o, pr = (placements.c, node_gaps.c, bookings.c, jobs.c, offerings.c,
                         prices.c)
    reads = [
        select(func.count(), func.count(p.end_ts), func.sum(p.id), func.sum(p.start_ts),
               func.sum(p.end_ts), func.sum(p.usd_per_hour),
               func.sum(case((p.waiting, 1), else_=0))),
        select(func.count(), func.sum(g.placement_id), func.sum(g.start_ts),
               func.sum(g.end_ts)),
        select(func.count(), func.sum(b.id), func.sum(b.job_id), func.sum(b.upfront_usd),
               func.sum(case((b.state.in_(UNPAID), 1), else_=0))),
        select(func.count(), func.sum(j.id)),
        select(func.count(), func.max(o.id)),
        # Prices from after the last settled charge's end charge nothing finished.
        select(func.count(), func.sum(pr.effective_ts), func.sum(pr.usd_per_hour)).where(
            pr.effective_ts <= select(func.max(p.end_ts)).scalar_subquery()),
    ]
    with store.engine.connect() as conn:
        return repr([tuple(conn.execute(read).one()) for read in reads])


def booked_upfront(made: Iterable[Any]) -> float:
    """What a job's capacity blocks cost upfront: those bought (not being bought, nor
    failed), as its cost adds them."""
    return sum(b.booked.upfront_usd for b in made if b.state not in UNPAID)


def spec_of(stored: dict) -> dict:
    """The job file a job was stored with ({} where none is)."""
    spec = stored.get("spec") if isinstance(stored, dict) else None
    return spec if isinstance(spec, dict) else {}


def nodes(stored: dict) -> int:
    """The job's nodes (num_nodes; 1 but for a multi-node job): each is charged."""
    value = spec_of(stored).get("num_nodes", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else 1
