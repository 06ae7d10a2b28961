"""`status` lists each placement of a job as billed, its hours times the hourly price it
was charged making its amount as written (an older '0.01 h, $0.0012' at $0.0796/h made
$0.0008), and says the hours are the placement's, begun by the launch (or the recovery,
move or start), not the time the launch took."""

from __future__ import annotations

import re
from pathlib import Path

from costsched.amounts import as_written
from costsched.store import PriceStore
from tests.costsched.cli.test_status_amounts import ran, status_text
from tests.costsched.test_costs import EAST_A, WEST, observe

PLACED = re.compile(r"job \d+: (placed [a-z ]+) on (.+?): billed ([0-9.]+) h x "
                    r"\$([0-9.]+)/h = \$([0-9.]+)$")


def test_each_placement_reads_hours_times_its_price_making_its_amount(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0796)])
    observe(store, WEST, [(0, 0.3644)])
    ran(store, tmp_path, "tiny", [(EAST_A, 0.0796, "launch", 53),  # 0.0147 h
                                  (WEST, 0.3644, "migration", 7)])  # 0.0019 h
    out = status_text(store, db)
    lines = [m.groups() for line in out.splitlines()
             if (m := PLACED.search(line.strip()))]
    assert [(how, where) for how, where, *_ in lines] == [
        ("placed at its launch", "aws us-east-1a p3.2xlarge spot"),
        ("placed by its migration", "aws us-west-2b p3.2xlarge spot")], out
    for _, _, hours, price, amount in lines:
        places = len(amount.partition(".")[2])
        assert f"{as_written(float(hours) * float(price), places):.{places}f}" == amount, \
            (hours, price, amount)
    assert "job 1: launch on" not in out  # the old label: 'the launch took 0.01 h'
