"""A stop at a budget's cap is decided on what the job is then billed: the spend the
check weighs is the charge of its placements to the check's time, as the stop ends them
(whole seconds, the second under way not yet charged), so the stop's line adds up against
`status` and the bill. Its cap still holds: the next interval is charged ahead in whole
seconds, never less than the time to the next check. In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched import costs
from costsched.config import BudgetsConfig
from costsched.service import jobs as service
from costsched.service.jobs import caps, decider
from costsched.service.jobs.caps import raise_budget
from costsched.store import PriceStore
from costsched.store.leases import holder_name
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

WATCH = 30.0  # the watch interval, seconds


def _launched(store: PriceStore, tmp_path: Path) -> tuple[int, FakeLauncher]:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "edge", "throughputs": {"V100": 0.5}, "steps": 2000, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return job.id, launcher


def _verdicts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, float, str | None]]:
    """Each cap check's (spent, charged ahead, verdict), as `enforce` asks them."""
    seen: list[tuple[float, float, str | None]] = []
    asked = decider.budget_verdict

    def recorded(name: str, spent_usd: float, next_usd: float, *args: object,
                 **kwargs: object) -> str | None:
        why = asked(name, spent_usd, next_usd, *args, **kwargs)
        seen.append((spent_usd, next_usd, why))
        return why

    monkeypatch.setattr(decider, "budget_verdict", recorded)
    return seen


def test_the_stop_is_decided_on_the_spend_then_billed(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job_id, launcher = _launched(store, tmp_path)
    [placed] = store.jobs.placement_rows([job_id])
    per_second = placed.usd_per_hour / 3600
    began = placed.start_at.replace(microsecond=0)  # as charged: whole seconds
    # Between what 100 s and what 101 s, each with the interval ahead, come to: a check
    # half way through the 101st second is within it, the next one is not.
    cap = per_second * (100 + WATCH + 0.5)
    raise_budget(store, job_id, cap, at=placed.start_at)
    seen = _verdicts(monkeypatch)
    first = began + timedelta(seconds=100.5)
    caps.enforce(store, launcher, BudgetsConfig(), first, WATCH)
    assert store.jobs.get(job_id).state == "running"
    caps.enforce(store, launcher, BudgetsConfig(), first + timedelta(seconds=WATCH), WATCH)
    assert store.jobs.get(job_id).state == "stopped"
    spent, _, why = seen[-1]
    assert why is not None
    billed = costs.job_cost(store, job_id, now=first + timedelta(hours=1),
                            checkpoint_gb=1.0).total_usd
    assert spent == billed  # the same figure, not one summed again
    assert billed <= cap


def test_a_check_charges_ahead_to_the_whole_second_of_the_next(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An interval that is not whole seconds (30.5 s) is charged 31 s ahead: the next
    check, 30.5 s on, may fall in the 31st second, which its stop bills."""
    job_id, launcher = _launched(store, tmp_path)
    [placed] = store.jobs.placement_rows([job_id])
    per_second = placed.usd_per_hour / 3600
    began = placed.start_at.replace(microsecond=0)
    raise_budget(store, job_id, per_second * (100 + 30.5 + 0.25), at=placed.start_at)
    seen = _verdicts(monkeypatch)
    at = began + timedelta(seconds=100.7)
    caps.enforce(store, launcher, BudgetsConfig(), at, 30.5)
    spent, ahead, why = seen[-1]
    assert ahead == pytest.approx(per_second * 31)
    assert why is not None and "31 s at" in why
    # Stopped now: billed what it was decided on, within its cap.
    billed = costs.job_cost(store, job_id, now=at + timedelta(hours=1),
                            checkpoint_gb=1.0).total_usd
    assert spent == billed  # the same figure, not one summed again


@pytest.mark.parametrize(("apart", "charged"), [(31, 30), (32, 32), (75, 75)])
def test_a_check_on_time_but_for_jitter_charges_its_interval(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, apart: int,
        charged: int) -> None:
    """The watching daemon's last two passes 31 s apart (stored to the second: on time)
    charge the 30 s interval ahead and say so; 32 s or 75 s apart (slow passes), as long
    as they were apart, and say why."""
    job_id, launcher = _launched(store, tmp_path)
    [placed] = store.jobs.placement_rows([job_id])
    per_second = placed.usd_per_hour / 3600
    raise_budget(store, job_id, per_second * 10, at=placed.start_at)  # stopped at once
    holder = holder_name()
    store.daemons.register(holder, kind="auto", tasks=("watch",), watch_seconds=WATCH,
                           log="", at=placed.start_at)
    store.daemons.passed(holder, "ok", "", placed.start_at)
    store.daemons.passed(holder, "ok", "", placed.start_at + timedelta(seconds=apart))
    seen = _verdicts(monkeypatch)
    at = placed.start_at.replace(microsecond=0) + timedelta(seconds=5.5)
    caps.enforce(store, launcher, BudgetsConfig(), at, WATCH)
    assert store.jobs.get(job_id).state == "stopped"
    _, ahead, why = seen[-1]
    assert ahead == pytest.approx(per_second * charged)
    assert why is not None
    assert (f"({charged:g} s at " in why) == (charged == 30), why
