"""An instance ended by the sweep says what it cost as hours x price = amount, and the
line adds up as written: its hours carry the digits the product needs."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from costsched.migration.launcher import Instance
from costsched.service.jobs.sweep import Stray

AT = datetime(2026, 3, 1, tzinfo=timezone.utc)
KEY = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")


def test_a_strays_cost_reads_hours_times_price_that_make_its_amount() -> None:
    started = AT - timedelta(seconds=51.12)  # 0.0142 h
    stray = Stray(Instance("1-1", 1, "a", KEY, "running", started_at=started), 1,
                  "no placement owns it", 0.1809)
    line = stray.line(AT)
    # 0.01 h x $0.1809/h is $0.0018: beside $0.0026 it did not add up.
    assert line.endswith("up 0.0142 h at $0.1809/h (stored price): $0.0026"), line
