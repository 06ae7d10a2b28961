"""The store's scale for charged figures, one per store: the decimals of its smallest
settled charge in dollars and in hours (`amounts.store_scale`), and nothing more. It
changes only when a smaller charge settles, never with the number of jobs in the store;
every view (`status`, `status JOB`, `report` and its HTML file, `report --job`,
`report --billed`, the dashboard) writes charged figures at it and each total as the sum
of its rows as written (`amounts.total_as_written`), so that the same job reads the same
everywhere. It is one read of an aggregate (`store.jobs.smallest_settled()`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from costsched.amounts import Scale, store_scale
from costsched.store import PriceStore

# A booking in these states cost nothing upfront (it is being bought, or it was not).
UNPAID = ("purchasing", "failed")


def settled_scale(store: PriceStore) -> Scale:
    """The store's scale (see the module)."""
    return store_scale(*store.jobs.smallest_settled())


def booked_upfront(made: Iterable[Any]) -> float:
    """What a job's capacity blocks cost upfront: those bought (not being bought, nor
    failed), as its cost adds them."""
    return sum(b.booked.upfront_usd for b in made if b.state not in UNPAID)
