"""What a job's capacity blocks cost upfront, as its cost adds them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# A booking in these states cost nothing upfront (it is being bought, or it was not).
UNPAID = ("purchasing", "failed")


def booked_upfront(made: Iterable[Any]) -> float:
    """What a job's capacity blocks cost upfront: those bought (not being bought, nor
    failed), as its cost adds them."""
    return sum(b.booked.upfront_usd for b in made if b.state not in UNPAID)
