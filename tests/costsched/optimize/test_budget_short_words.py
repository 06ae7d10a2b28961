"""A budget too small for every offering is refused with figures at the plan table's
precision: under a dime at four decimals ('$0.0159 short ... costs $0.0259'), never cents
that hide most of the gap ('$0.02 short ... costs $0.03')."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from costsched import service

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
JOB = ("name: tiny\nrun: 'true'\nthroughputs: {T4: 10}\nsteps: 3000\n"
       "constraints: {markets: [spot], budget: 0.01}\n")


def test_a_small_budget_s_gap_reads_at_four_decimals(tmp_path: Path, cloud_launcher: str) -> None:
    path = tmp_path / "j.yaml"
    path.write_text(JOB)
    [plan] = service.plan(str(tmp_path / "empty.sqlite"), [path], at=NOW).jobs
    assert plan.best is None
    found = re.search(r"budget \$0\.0100 is \$(\d+\.\d+)\*? short: .*, costs \$(\d+\.\d+)",
                      plan.reason)
    assert found is not None, plan.reason
    short, cost = found.groups()
    assert len(short.split(".")[1]) == 4 and len(cost.split(".")[1]) == 4, plan.reason
    assert round(float(cost) - 0.01, 4) == float(short)  # the gap as written
