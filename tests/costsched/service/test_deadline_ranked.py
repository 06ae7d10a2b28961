"""A deadline decision ranks the job's offerings once: the decider hands the market the
ranking of the job's plan (`decider.planned`), and the decision given that ranking is the
one made from the offerings alone."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.jobspec import parse, resolve
from costsched.optimize import planner
from costsched.service import deadline_jobs
from costsched.service.jobs.decider import JobNow, decider_for, market_at, planned
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable
from tests.costsched.service.test_deadline_jobs import WORK_HOURS, deadline_spec
from tests.costsched.service.test_jobs import offer

NOW = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
ZONES = {"us-east-1a": 1.0, "us-east-1b": 1.5, "us-east-1c": 2.5}


@pytest.fixture()
def store(tmp_path: Path):  # noqa: ANN201
    opened = PriceStore(str(tmp_path / "store.sqlite"))
    at = NOW - timedelta(hours=1)
    opened.ingest(pd.DataFrame([offer(z, p, at) for z, p in ZONES.items()]
                               + [{**offer("", 3.0, at), "market": "on_demand"}]))
    yield opened
    opened.dispose()


def _resolved(tmp_path: Path, slack_hours: float):  # noqa: ANN202
    path = deadline_spec(tmp_path, "due", WORK_HOURS + slack_hours)
    return resolve(parse(yaml.safe_load(path.read_text()), str(path)), ThroughputTable(), NOW)


@pytest.mark.parametrize("slack_hours", [10.0, 0.5])
def test_a_decision_given_the_plan_s_ranking_is_the_one_made_alone(
        store: PriceStore, tmp_path: Path, slack_hours: float) -> None:
    resolved = _resolved(tmp_path, slack_hours)
    market = market_at(store, NOW)
    offerings = market.offerings_for(resolved)
    asked = dict(created_at=NOW, at=NOW, steps_left=resolved.job.steps, current=None,
                 measured_rates=market.rates, offerings=offerings)
    alone = deadline_jobs.decide_deadline(store, resolved, **asked)
    given = deadline_jobs.decide_deadline(store, resolved, **asked,
                                          ranked=planned(resolved, market, NOW).ranked)
    assert repr(given) == repr(alone)  # (its NaNs too)
    assert given.choice[4] == ("spot" if slack_hours > 1 else "on_demand")


def test_a_launch_s_deadline_decision_ranks_the_job_once(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resolved = _resolved(tmp_path, 10.0)
    ranked = []
    plan_job = planner.plan_job

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        ranked.append(1)
        return plan_job(*args, **kwargs)

    monkeypatch.setattr(planner, "plan_job", counted)
    monkeypatch.setattr(deadline_jobs, "plan_job", counted)
    job = JobNow(resolved, NOW, "spot-anywhere", "us-east-1", None, resolved.job.steps,
                 first=True)
    decision = decider_for("spot-anywhere").decide(job, market_at(store, NOW), NOW)
    assert decision.choice[2] == "us-east-1a"
    assert len(ranked) == 1
