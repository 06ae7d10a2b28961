"""A move's price, itemised in a decision line (`migrate --dry-run`, the daemon's log, the
kept decision), reads as a sum: its items as written add up to its total as written, at
the line's precision (one item within a unit of its last decimal where they would not
alone), for any split of the move's price."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from costsched.amounts import decimals_kept
from costsched.optimize.decision import MovePrice
from costsched.service.jobs.reasons import _itemised, _items

ITEMS = re.compile(r" of \$(\S+) \(egress \$(\S+), restart \$(\S+), lost work \$(\S+), "
                   r"overlap \$(\S+)\)")


def test_a_users_move_reads_as_a_sum() -> None:
    """'the move of $0.0935 (egress <$0.0001, restart $0.0467, lost work $0.0467, overlap
    $0.0000)' added up to $0.0934 as written."""
    line = _itemised(MovePrice(0.00003, 0.04674, 0.04674, 0.0), 4)
    total, *parts = (Decimal(v) for v in ITEMS.fullmatch(line).groups())
    assert total == Decimal("0.0935") and sum(parts) == total, line


@pytest.mark.parametrize("least", [2, 3, 4, 6])
def test_every_split_adds_up(least: int) -> None:
    import random

    rng = random.Random(7)
    for _ in range(500):
        move = MovePrice(*(rng.choice([0.0, rng.uniform(0, 0.2), rng.uniform(0, 30)])
                           for _ in range(4)))
        # (a line's precision keeps its small amounts' digits: `decimals_kept`)
        places = max(least, decimals_kept(_items(move)))
        line = _itemised(move, places)
        total, *parts = (Decimal(v) for v in ITEMS.fullmatch(line).groups())
        assert sum(parts) == total, line
        # each item within one unit of its last decimal of its exact figure
        unit = Decimal(1).scaleb(-places)
        exact = [move.egress_usd, move.restart_usd, move.lost_work_usd, move.overlap_usd]
        assert all(abs(p - Decimal(repr(x))) <= unit
                   for p, x in zip(parts, exact, strict=True)), line
