"""Budgets in plain words: a job that names a budget the configuration lacks is refused at
launch (with the close name) rather than run capped by nothing; a refusal says what gives
the job more; a stopped job its budget's cap would stop again at once is not started; and
each threshold reads 'budget NAME reached 50% of ...', said once (older words included)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.model import InvalidInput
from costsched.service.jobs import caps, start_check
from costsched.service.jobs.budget_launch import launch_fits
from costsched.store import PriceStore

AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
KEY = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
TEAM = BudgetsConfig.model_validate({"named": {"forecasting": {"usd": 3, "period": "day"}}})


@pytest.fixture
def priced(db_path: Path) -> PriceStore:
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=1.0, effective_at=AT, source="test")]))
    return store


def _job(tmp_path: Path, **constraints: object) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({
        "name": "ar", "run": "true", "throughputs": {"V100": 1}, "steps": 36_000,
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"], **constraints}}))
    return path


def test_a_budget_name_the_configuration_lacks_is_refused_with_the_close_one(
        tmp_path: Path, priced: PriceStore) -> None:
    job = _job(tmp_path, budget_name="forcasting")
    with pytest.raises(InvalidInput) as caught:
        launch_fits(priced, [job], TEAM, AT)
    assert str(caught.value) == (
        f"{job}: job 'ar': field constraints.budget_name 'forcasting': no budget of that "
        "name in the configuration: expected one of forecasting (budgets.named); did you "
        "mean 'forecasting'?")
    with pytest.raises(InvalidInput, match=r"no budget is configured: add "
                                           r"\[budgets.named.forcasting\] with usd"):
        launch_fits(priced, [job], BudgetsConfig(), AT)


def test_a_refusal_says_what_gives_the_job_more(tmp_path: Path, priced: PriceStore) -> None:
    [named] = launch_fits(priced, [_job(tmp_path, budget_name="forecasting")], TEAM, AT)
    assert not named.fits and named.line().endswith(
        "does not fit; raise budgets.named.forecasting.usd in the configuration (its file: "
        "`costsched config show`), or wait for the next UTC day")
    job = _job(tmp_path, budget=2)
    [own] = launch_fits(priced, [job], BudgetsConfig(), AT)
    amount, places = own.enough()  # what holds its pessimistic cost and the watch's charge
    assert amount >= own.pessimistic_usd + own.ahead_usd
    assert own.line().endswith(f"does not fit; raise constraints.budget in {job} to "
                               f"{amount:.{places}f}")
    [roomy] = launch_fits(priced, [_job(tmp_path, budget=2000)], BudgetsConfig(), AT)
    assert roomy.line().endswith("against $2,000.00 left of its own budget: fits")


def _stopped_at_cap(store: PriceStore, spec: dict) -> tuple[int, datetime]:
    """A job that ran 22:00-01:00 at $1/h, stopped at 01:00."""
    start = datetime(2026, 3, 1, 22, tzinfo=timezone.utc)
    job = store.jobs.create("ar", {"spec": spec}, 100, at=start)
    store.jobs.place(job, KEY, gpu_model="V100", gpu_count=1, at=start, usd_per_hour=1.0,
                     reason="launch")
    end = start + pd.Timedelta(hours=3)
    store.jobs.end_placement(job, end)
    return job, end + pd.Timedelta(minutes=1)


def test_a_job_at_its_cap_is_not_started_again(priced: PriceStore) -> None:
    job, at = _stopped_at_cap(priced, {"name": "ar", "constraints": {"budget": 3.01}})
    said = start_check.start_refusal(priced, job, 1.0, at, BudgetsConfig(), 60)
    assert said == (f"job {job} (ar) is at its budget: $3.00 spent + $0.02 for the next "
                    "watch interval would pass the budget of $3.01; give it more than $3.00 "
                    "spent + $0.02 for the next watch interval: `costsched start ar --budget "
                    "USD`")
    # Its rest priced (what a start's placement says): the amount that is enough, rounded
    # up, and that amount given lets it start.
    said = start_check.start_refusal(priced, job, 1.0, at, BudgetsConfig(), 60, rest_usd=0.4,
                              steps_left=40, start_usd=0.25)
    assert said == (f"job {job} (ar) is at its budget: $3.00 spent + $0.02 for the next "
                    "watch interval would pass the budget of $3.01; give it enough: "
                    "`costsched start ar --budget 3.67` ($3.00 spent + $0.40* expected for its "
                    "40 steps left + $0.25 to start it + $0.02 for the next watch interval); "
                    "that amount also holds its rest taking about 70 s longer than priced (60 s "
                    "charged ahead + 12 s its rounding up adds, less 2 s of the watch's "
                    "margins); "
                    "*: at its plan's speed, as it has logged no steps of its own yet")
    assert start_check.start_refusal(priced, job, 1.0, at, BudgetsConfig(), 60,
                              budget_usd=3.67) is None
    assert start_check.start_refusal(priced, job, 1.0, at, BudgetsConfig(), 60,
                              budget_usd=3.01) is not None
    caps.raise_budget(priced, job, 10, at=at)
    assert start_check.start_refusal(priced, job, 1.0, at, BudgetsConfig(), 60) is None


def test_a_job_at_its_team_s_cap_is_not_started_again(priced: PriceStore) -> None:
    job, at = _stopped_at_cap(priced, {"name": "ar",
                                       "constraints": {"budget_name": "forecasting"}})
    tight = BudgetsConfig.model_validate({"named": {"forecasting": {"usd": 1.01,
                                                                     "period": "day"}}})
    said = start_check.start_refusal(priced, job, 1.0, at, tight, 60)
    assert said == (f"job {job} (ar) is at budget forecasting: $1.00 spent (since midnight) "
                    "+ $0.02 for the next watch interval would pass the budget of $1.01; "
                    "raise budgets.named.forecasting.usd in the configuration (its file: "
                    "`costsched config show`), or wait for the next UTC day").replace(
                        " (since midnight)", "")
    assert start_check.start_refusal(priced, job, 0.1, at, tight, 60) is None  # room for it
    assert start_check.start_refusal(priced, job, 1.0, at, TEAM, 60) is None


def test_thresholds_read_budget_name_reached_and_are_said_once(priced: PriceStore) -> None:
    job, at = _stopped_at_cap(priced, {"name": "ar", "constraints": {
        "budget": 4, "budget_name": "forecasting"}})
    # An older version's words for the team's 50%: not said again.
    priced.jobs.note(job, "budget", "reached forecasting 50% of $1.50 (day from 2026-03-02): "
                     "$0.75 of $1.50 spent", at=at)
    team = BudgetsConfig.model_validate({"named": {"forecasting": {"usd": 1.5,
                                                                    "period": "day"}}})
    events = []
    for state in caps.budget_states(priced, team, at, 60):  # (as while the job runs)
        state = replace(state, running=state.jobs)
        events += caps._thresholds(priced, state, [0.5, 0.8], at)  # noqa: SLF001
    # Its own $4 is 75% spent; the team's $1.00 since midnight is 67% of $1.50, its 50%
    # said already.
    assert events == [f"job {job}: its budget reached 50% of $4.00 (total): $3.00 of $4.00 "
                      "spent"]
    events = []
    for state in caps.budget_states(priced, team, at, 60):  # (as while the job runs)
        state = replace(state, running=state.jobs)
        events += caps._thresholds(priced, state, [0.5, 0.8], at)  # noqa: SLF001
    assert events == []  # each once


def test_a_start_hint_says_its_amount_is_its_parts_rounded_up_when_they_read_less():
    """'--budget 5.99' beside parts that read $5.97 says it is their exact sum rounded up;
    parts that add to the amount as written need no such word."""
    said = caps.enough("capped", 1.004, 4.504, 40, 0.0, 0.474, paced="its own 1 steps/s")
    assert "`costsched start capped --budget 5.99` ($1.00 spent + $4.50 expected" in said
    assert said.endswith("+ $0.47 for the next watch interval; their exact sum rounded up "
                         "to the cent)"), said
    exact = caps.enough("capped", 1.0, 4.5, 40, 0.0, 0.48, paced="its own 1 steps/s")
    assert "--budget 5.98` ($1.00 spent" in exact and "rounded" not in exact, exact
