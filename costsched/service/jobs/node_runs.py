"""Each node of a gang billed from when it runs, where its cloud bills so (a flex-start
gang: BILLED_FROM_RUNNING): every watch pass tells the store which nodes of each such open
placement run and since when (`JobStore.track_nodes`), before anything is charged. A node
still waiting for capacity while a peer runs, or whose replacement waits for it, is not
charged until it runs; a node that ran is charged, even when its gang never ran whole."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from costsched.migration.launcher import CloudError, Launcher
from costsched.model import BILLED_FROM_RUNNING
from costsched.service.jobs.runs import _runs
from costsched.store import PriceStore


def track_gangs(store: PriceStore, launcher: Launcher, at: datetime,
                job_ids: Iterable[int] | None = None) -> None:
    """Store what the launcher says of the nodes of this launcher's open placements of
    gangs billed from running (of `job_ids`, else every job's; one status call for all,
    none when there is none). A cloud that does not answer is asked again at the next
    pass."""
    placed = [p for p in store.jobs.placement_rows(job_ids, open_only=True)
              if p.market in BILLED_FROM_RUNNING and p.instance]
    if not placed:
        return
    runs = _runs(store, {p.job_id for p in placed})
    gangs = [p for p in placed if runs[p.job_id].launcher == launcher.name
             and runs[p.job_id].nodes > 1]
    if not gangs:
        return
    try:
        seen = launcher.statuses([p.instance for p in gangs])
    except CloudError:
        return
    for p in gangs:
        instance = seen.get(p.instance)
        if instance is None or not instance.live or not instance.running_nodes:
            continue  # ended (its placement is closed where it is found so), or no news
        store.jobs.track_nodes(p.job_id, p.instance, dict(instance.running_nodes),
                               runs[p.job_id].nodes, at)
