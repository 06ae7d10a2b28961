"""A budget's 80% warning comes a watch interval ahead of the spend, as the cap's stop is
decided ahead: at the check whose spend plus the next interval's charge reaches 80%, not at
the check that stops the job (a watch interval that spans the crossing used to bring both
at once). Where no check could foresee it (the first check that sees the job finds it past
80%), the warning says it is late. The warning and the stop read the job's spend at one
precision. In-memory launcher, SQLite store."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from costsched.config import BudgetsConfig
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.budget_notes import as_event
from costsched.service.jobs.budget_state import BudgetState
from costsched.service.jobs.caps import raise_budget
from costsched.service.jobs.thresholds import notices
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

WATCH = 30.0
USD_PER_HOUR = 1.8  # $0.015 a watch interval: more than a cent, as an A100's is


def _launched(store: PriceStore, tmp_path: Path, budget: float) -> tuple[int, FakeLauncher]:
    set_prices(store, {"us-east-1a": USD_PER_HOUR},
               datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "warned", "throughputs": {"V100": 0.5}, "steps": 2000, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [placed] = store.jobs.placement_rows([job.id])
    raise_budget(store, job.id, budget, at=placed.start_at)
    return job.id, launcher


def _checks(store: PriceStore, launcher: FakeLauncher, job_id: int,
            seconds: list[float]) -> list[list[str]]:
    """The budget events of a check at each of `seconds` after the job's start."""
    [placed] = store.jobs.placement_rows([job_id])
    start = placed.start_at.replace(microsecond=0)
    return [[e.partition(": ")[2] for e in caps.enforce(
                store, launcher, BudgetsConfig(), start + timedelta(seconds=s), WATCH)
             if e.kind == "budget"] for s in seconds]


def _spent(line: str) -> str:
    found = re.search(r"\$(\d+\.\d+) (?:of \$[\d.]+ )?spent", line)
    assert found is not None, line
    return found.group(1)


def test_the_warning_comes_a_check_before_the_stop(store: PriceStore, tmp_path: Path) -> None:
    # $0.05 at $0.0005 a second: 80% ($0.04) is spent at 80 s, the cap stops it at the
    # first check whose spend and next interval ($0.015) pass $0.05, at 91 s.
    job_id, launcher = _launched(store, tmp_path, 0.05)
    checks = _checks(store, launcher, job_id, [1, 31, 61, 91])
    [stop_check] = [i for i, said in enumerate(checks) if any(
        s.startswith("stopped at its own budget") for s in said)]
    warned = [(i, s) for i, said in enumerate(checks) for s in said if "80%" in s]
    assert len(warned) == 1, checks  # said once, not again as the spend passes it
    [(i, warning)] = warned
    assert i == stop_check - 1, checks  # a watch interval ahead of the stop
    assert warning == ("its budget will reach 80% of $0.0500 (total) by the next check: "
                       "$0.0305 of $0.0500 spent + $0.0150 for the next watch interval")
    [stop] = [s for s in checks[stop_check] if s.startswith("stopped at")]
    # One precision for the spend in both lines of the job's log.
    assert stop.startswith("stopped at its own budget: $0.0455 spent + $0.0150 for the "
                           "next watch interval"), stop
    assert len(_spent(warning).split(".")[1]) == len(_spent(stop).split(".")[1])
    # A warning it is, in the daemon's log and its notification.
    assert as_event(job_id, warning).level == "warning"


def test_a_warning_no_check_could_foresee_says_it_is_late(
        store: PriceStore, tmp_path: Path) -> None:
    # Its first check comes at 165 s: $0.0825 of $0.10 spent, 82%; the next interval
    # keeps it within its cap.
    job_id, launcher = _launched(store, tmp_path, 0.10)
    [said] = _checks(store, launcher, job_id, [165])
    assert said == ["its budget reached 80% of $0.1000 (total): $0.0825 of $0.1000 spent; "
                    "late: no earlier check foresaw it"]


def test_a_check_that_stops_the_job_forecasts_nothing(
        store: PriceStore, tmp_path: Path) -> None:
    # At 75 s, $0.0375 of $0.05 spent (75%) and $0.015 ahead: the cap stops it now, so it
    # will not reach 80%: the stop says what happens, and no forecast is said.
    job_id, launcher = _launched(store, tmp_path, 0.05)
    [said] = _checks(store, launcher, job_id, [75])
    assert [s.split(":")[0] for s in said] == [
        "its budget reached 50% of $0.0500 (total)", "stopped at its own budget"], said
    assert not any("80%" in s for s in said), said


def test_no_notice_after_its_job_ended_nor_a_lower_one_after_a_higher(
        store: PriceStore, tmp_path: Path) -> None:
    # $0.10: at 135 s, $0.0675 spent (50% passed, unsaid) + $0.015 ahead reaches 80%: the
    # forecast is said. The job then succeeds short of 80%: the checks after say nothing,
    # neither 50% (lower than the 80% said) nor anything else of a job that ended.
    job_id, launcher = _launched(store, tmp_path, 0.10)
    [first] = _checks(store, launcher, job_id, [135])
    assert [s.split(":")[0] for s in first] == [
        "its budget will reach 80% of $0.1000 (total) by the next check"], first
    [placed] = store.jobs.placement_rows([job_id])
    launcher.set(placed.instance, "succeeded")
    start = placed.start_at.replace(microsecond=0)
    service.reconcile(store, launcher, at=start + timedelta(seconds=140))
    assert store.jobs.get(job_id).state == "succeeded"
    assert _checks(store, launcher, job_id, [170, 200]) == [[], []]


def test_a_lower_threshold_is_not_said_after_a_higher_one(store: PriceStore,
                                                          tmp_path: Path) -> None:
    # The job still runs, its charge ahead now nothing (its pace dropped): 50% passed,
    # 80% said ahead before: 50% is not said after it; 100%, higher, is.
    job_id, _ = _launched(store, tmp_path, 0.10)
    at = datetime.now(timezone.utc)
    store.jobs.note(job_id, "budget", "its budget will reach 80% of $0.1000 (total) by the "
                    "next check: $0.0675 of $0.1000 spent + $0.0150 for the next watch "
                    "interval", at=at)
    state = BudgetState(f"job {job_id} (warned)", "job", 0.10, "total", 0.07, 0.0, 0.07,
                        jobs=(job_id,), running=(job_id,))
    assert notices(store, state, [0.5, 0.8, 1.0], at) == []
    over = replace(state, spent_usd=0.1, forecast_usd=0.1)
    [said] = notices(store, over, [0.5, 0.8, 1.0], at)
    assert said.partition(": ")[2].startswith("its budget reached 100% of $0.10"), said
