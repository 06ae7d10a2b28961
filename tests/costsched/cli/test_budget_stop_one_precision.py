"""`status`'s line under a job its own budget's cap stopped joins the stop (made by the
watch) and the hint that gives it enough (made as `start` checks it now): its spend reads
at one precision in both, '$0.05 spent ... ($0.0478 spent' never, and what is left now at
it too. In-memory launcher, SQLite store."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from costsched.config import BudgetsConfig
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.budget_start import start_commands
from costsched.service.jobs.caps import raise_budget
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

INTERVAL = 206.0  # $0.0572 at $1/h: the next interval's charge reads at cents


def test_the_stop_and_its_hint_read_the_spend_alike(store: PriceStore, tmp_path: Path
                                                     ) -> None:
    from costsched.cli.status_lines import cap_lines

    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    # Its plan's 1,000 steps/s (its run is far slower): its rest (2 s) reads under a cent,
    # and is what the watch charges it ahead (3 s): a budget its spend nearly reaches.
    spec = {"name": "edge", "throughputs": {"V100": 1000}, "steps": 2000, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [placed] = store.jobs.placement_rows([job.id])
    raise_budget(store, job.id, 0.048, at=placed.start_at)
    at = placed.start_at.replace(microsecond=0) + timedelta(seconds=172)  # $0.0478 spent
    [event] = [e for e in caps.enforce(store, launcher, BudgetsConfig(), at, INTERVAL)
               if "stopped at " in e]
    [s] = service.status(store, launcher, job.id)
    later = at + timedelta(minutes=1)
    states = caps.budget_states(store, BudgetsConfig(), later, INTERVAL)
    starts = start_commands(store, launcher, [s.record], later)
    [line] = cap_lines(s, states, starts)
    spent = re.findall(r"\$([\d.]+) spent", line)
    assert len(spent) >= 2 and len(set(spent)) == 1, line
    assert "$0.0478 spent" in line, line
    # what is left now reads at the spend's precision: the two add up to the cap
    left = re.search(r"; \$([\d.]+) left now of its budget of \$([\d.]+):", line)
    assert left is not None and left.group(1) == "0.0002", line
    assert round(float(spent[0]) + float(left.group(1)), 6) == float(left.group(2)), line
