"""`costsched backtest-deadline --block`: a capacity block each run may buy, replayed
through the same policies, its price in each run's cost."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.costsched.cli.test_deadline_backtest import _run, imported  # noqa: F401

# A 1-hour job due in 3 hours; spot in il-central-1a always (about $1/h), in
# me-central-1a every other minute at $5/h; on-demand $4/h.
JOB = ["--job-hours", "1", "--deadline", "3", "--restart-minutes", "3",
       "--checkpoint-minutes", "10", "--on-demand-price", "4", "--policies", "greedy",
       "--starts", "3"]


def test_a_block_is_replayed_beside_each_policy_with_its_price(imported: str,  # noqa: F811
                                                               tmp_path: Path) -> None:
    # A block from half an hour after each start, 3 h long (usable 1.5 h): $3.
    code, out = _run(["backtest-deadline", "--db", imported, *JOB, "--block",
                      "p3.2xlarge,il-central-1b,0.5,3,3", "--json"])
    assert code == 0, out
    doc = json.loads(out)
    (block,) = doc["trace"]["blocks"]
    assert block["usable_hours"] == 1.5 and block["zone"] == "il-central-1b"
    runs = pd.DataFrame(doc["runs"])
    label = "greedy + block il-central-1b +0.5 h for 3 h $3.00"
    booked, plain = runs[runs["policy"] == label], runs[runs["policy"] == "greedy"]
    assert len(booked) == len(plain) == 6 and booked["met"].all()  # 3 starts x 2 homes
    # Greedy waits for the block (the block holds the hour's work and is paid already):
    # the block's price and nothing else, from either home zone.
    assert booked["cost_usd"].tolist() == pytest.approx([3.0] * 6)
    assert (booked["spot_hours"] == 0).all()
    # Without it, greedy at home in il-central-1a runs on spot for about $1: there the
    # block does not pay.
    home = plain[plain["home"] == "il-central-1a"]
    assert len(home) == 3 and (home["cost_usd"] < 1.5).all()
    assert label in set(pd.DataFrame(doc["summary"])["policy"])


def test_blocks_from_a_file_and_bad_blocks_in_one_line(imported: str,  # noqa: F811
                                                      tmp_path: Path) -> None:
    blocks = tmp_path / "blocks.csv"
    blocks.write_text("instance_type,zone,start_hours,hours,upfront_usd\n"
                      "p3.2xlarge,il-central-1b,0,3,2\np3.2xlarge,il-central-1a,1,4,1.5\n")
    code, out = _run(["backtest-deadline", "--db", imported, *JOB, "--block", str(blocks),
                      "--wide"])
    assert code == 0, out
    for label in ("block il-central-1b +0 h for 3 h $2.00", "block il-central-1a +1 h for "
                  "4 h $1.50"):
        assert f"{label}: bought at each run's start" in out
    assert out.count("greedy + block") >= 2
    code, out = _run(["backtest-deadline", "--db", imported, *JOB, "--block",
                      "p3.2xlarge,il-central-1b,0,1"])
    assert code == 2 and "--block 'p3.2xlarge,il-central-1b,0,1': expected INSTANCE_TYPE" \
        in out and "Traceback" not in out
    code, out = _run(["backtest-deadline", "--db", imported, *JOB, "--block",
                      "p3.2xlarge,us-west-2a,0,3,1"])
    assert code == 2 and "region us-west-2 has no zone in the trace" in out
    code, out = _run(["backtest-deadline", "--db", imported, *JOB, "--block",
                      "p4d.24xlarge,il-central-1b,0,3,1"])
    assert code == 2 and "expected the replayed p3.2xlarge" in out
