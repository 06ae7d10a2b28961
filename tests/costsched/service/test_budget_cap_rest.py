"""A job whose spend plus its rest (its steps left at its pace) fits its own budget runs to
its end, though its spend plus a whole watch interval's charge would pass it: the watch
charges it ahead no more than its rest (in whole seconds, and one more); one whose rest
does not fit is still stopped at its cap, and its line's figures add up. In-memory
launcher, SQLite store."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import yaml

from costsched import own_budget
from costsched.config import BudgetsConfig
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.caps import raise_budget
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

STEPS = 2500
INTERVAL = 3600.0  # a whole interval at $1/h: $1, far past the budget


def _launched(store: PriceStore, tmp_path: Path, step: int, budget: float
              ) -> tuple[FakeLauncher, int, datetime]:
    """A job of 2,500 steps at its plan's 10 steps/s on $1/h, at `step`, 100 s in."""
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "near-end", "throughputs": {"V100": 10}, "steps": STEPS, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [placed] = store.jobs.placement_rows([job.id])
    raise_budget(store, job.id, budget, at=placed.start_at)
    at = placed.start_at.replace(microsecond=0) + timedelta(seconds=100)  # ~$0.0278 spent
    store.jobs.record_step(job.id, step, at=at)
    return launcher, job.id, at


def test_a_job_whose_rest_fits_its_budget_runs_to_its_end(store: PriceStore,
                                                          tmp_path: Path) -> None:
    launcher, job_id, at = _launched(store, tmp_path, STEPS - 8, 0.03)
    [state] = caps.budget_states(store, BudgetsConfig(), at, INTERVAL)
    # its 8 steps left at 10 steps/s: 0.8 s, charged as 1 s and one more, not an hour
    assert state.ahead_seconds[job_id] == 2.0
    assert state.next_usd[job_id] == own_budget.ahead_usd(1.0, 2.0)
    events = caps.enforce(store, launcher, BudgetsConfig(), at, INTERVAL)
    assert not [e for e in events if "stopped at " in e], events
    assert ("stop", launcher.instances(job_id)[0].id) not in launcher.calls
    [instance] = launcher.instances(job_id)
    launcher.states[instance.id] = replace(instance, state="succeeded", step=STEPS)
    service.reconcile(store, launcher)
    assert store.jobs.get(job_id).state == "succeeded"


def test_a_job_whose_rest_does_not_fit_is_still_stopped_and_its_line_adds_up(
        store: PriceStore, tmp_path: Path) -> None:
    launcher, job_id, at = _launched(store, tmp_path, 1000, 0.05)  # 150 s left: $0.0417
    [event] = [e for e in caps.enforce(store, launcher, BudgetsConfig(), at, INTERVAL)
               if "stopped at " in e]
    assert store.jobs.get(job_id).state == "stopped"
    found = re.search(r"\$([\d.]+) spent \+ \$([\d.]+) for the next watch interval "
                      r"\((\d+) s, to its end at its pace, at \$([\d.]+)/h\) would pass the "
                      r"budget of \$([\d.]+)", str(event))
    assert found is not None, event
    spent, ahead, seconds, price, cap = found.groups()
    assert seconds == "151"  # 150 s of steps left and one more, never the hour's
    places = len(ahead.split(".")[1])
    assert Decimal(price) * int(seconds) / 3600 == Decimal(ahead) or round(
        Decimal(price) * int(seconds) / 3600, places) == Decimal(ahead), event
    assert Decimal(spent) + Decimal(ahead) > Decimal(cap), event


def test_the_charge_ahead_is_at_most_the_rest_and_at_most_an_interval() -> None:
    assert own_budget.ahead_seconds(30.0, 0.3) == 2.0
    assert own_budget.ahead_seconds(30.0, 100.0) == 30.0
    assert own_budget.ahead_seconds(30.0, float("nan")) == 30.0  # rest not known
    assert own_budget.ahead_seconds(30.0, 0.0) == 30.0
    assert own_budget.ahead_usd(0.0796, 30.0, rest_seconds=0.3) == 0.0796 * 2 / 3600
