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


def test_a_price_of_five_decimals_reads_as_charged(tmp_path: Path) -> None:
    """A stopped job's launch (50 s) and recovery (99 s) at $0.07962/h: an older line read
    'billed 0.03 h x $0.0796/h = $0.002190' (the recovery's 0.0275 h at its own two
    significant digits, the price at four decimals), which is $0.002388."""
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    # A job that failed after 3 s ($0.000066 over 0.00083 h): money and hours at four
    # decimals all the same; the other job's parts read $0.0011 and $0.0022, its hours
    # at four decimals make them.
    ran(store, tmp_path, "fails", [(EAST_A, 0.07962, "launch", 3)], state="failed")
    ran(store, tmp_path, "moons", [(EAST_A, 0.07962, "launch", 50),
                                   (EAST_A, 0.07962, "recovery", 99)], state="stopped")
    out = status_text(store, db)
    lines = [m.groups() for line in out.splitlines()
             if (m := PLACED.search(line.strip()))]
    assert len(lines) == 3, out
    for _, _, hours, price, amount in lines:
        places = len(amount.partition(".")[2])
        assert f"{as_written(float(hours) * float(price), places):.{places}f}" == amount, \
            (hours, price, amount)
    assert [h for _, _, h, _, _ in lines] == ["0.0008", "0.0139", "0.0275"], out


def test_no_product_where_none_adds_up(tmp_path: Path) -> None:
    """A placement charged at prices that changed while it ran, over 100 h: its average
    price has more digits than any line writes, so no hours make its amount; the line
    says what it was billed and the average, and states no product."""
    from types import SimpleNamespace

    from costsched.cli.status_lines import _placement_line

    p = SimpleNamespace(end_at=object(), reason="launch", cloud="aws", region="us-east-1",
                        zone="us-east-1a", instance_type="p3.2xlarge", market="spot",
                        usd=24.567891234, hours=100.0, nodes=1,
                        charged_usd_per_hour=0.24567891234)
    line = _placement_line(p, 6, 5)
    assert " x " not in line and " = " not in line, line
    assert line.endswith("billed 100.00000 h, $24.567891 ($0.2457/h on average)"), line


def test_a_price_reads_alike_with_a_product_and_without() -> None:
    """21 s of $30.13118/h at seven decimals makes no product of hours at eight; its line
    then writes the price as the next line's product does, not '$30.1312/h', and the
    job's log writes it so too."""
    from types import SimpleNamespace

    from costsched.cli.status_lines import _placement_line
    from costsched.store.job_placements import placed_detail

    p = SimpleNamespace(end_at=object(), reason="launch", cloud="aws", region="us-west-2",
                        zone="", instance_type="g6e.48xlarge", market="on_demand",
                        usd=21 / 3600 * 30.13118, hours=21 / 3600, nodes=1,
                        charged_usd_per_hour=30.13118)
    line = _placement_line(p, 7, 8)
    assert line.endswith("$0.1757652 ($30.13118/h on average)"), line
    said = placed_detail(5, "start", ("aws", "us-west-2", "", "g6e.48xlarge", "on_demand"),
                         30.13118, None)
    assert said.endswith("at $30.13118/h"), said
