"""The price-driven core judges a move once: a policy that weighs its moves by the decision
model (dynamic-aware) is carried out as it decided, a baseline's move only when it pays
(and as published with `judge=False`, as its replay is)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pandas as pd
import pytest

from costsched.backtest import PUBLISHED_MODELS, BacktestConfig, PriceTrace, jobs_for_models
from costsched.backtest.accounting import Run
from costsched.backtest.engine import make_replay_policy, past_prices, simulate, throughputs
from costsched.decide.price import carried_out, choose, pays
from costsched.model import Constraints, Job
from costsched.optimize.decision import Overheads
from costsched.policies import JobState, make_policy, view_from_prices
from costsched.policies.base import JOB_SCOPE
from costsched.policies.history import with_typical
from costsched.throughput import ThroughputTable

AT = datetime(2026, 3, 1, tzinfo=timezone.utc)
ZONES = {"us-east-1a": 1.00, "us-east-1b": 1.20}  # today's spot prices
MODEL = "Transformer (batch size 256)"


def prices() -> pd.DataFrame:
    return pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone=zone, instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=price, on_demand_usd_per_hour=3.06, effective_at=AT, source="test")
        for zone, price in ZONES.items()])


@pytest.fixture
def placed() -> tuple:
    """Zones a ($1.00/h) and b ($1.20/h) today; a 10-day job on a."""
    table = ThroughputTable()
    sps = table.get(MODEL, "V100", 1).steps_per_second
    job = Job("j", "", MODEL, 10 * 24 * 3600 * sps, checkpoint_gb=0.0, checkpoint_hours=0.5,
              constraints=Constraints(regions=("us-east-1",), markets=("spot",)))
    view = view_from_prices(prices(), AT, table, MODEL)
    here = next(k for k in view.keys if k[2] == "us-east-1a")
    return view, JobState(job, "us-east-1", job.steps, here, Overheads())


def test_a_policy_that_weighs_its_moves_is_not_judged_again(recorded_store) -> None:  # noqa: ANN001
    """A 4-day CycleGAN job from us-east-1 started 2020-02-22 (the recorded prices): on
    02-26 dynamic-aware moves it from Azure eastus to northcentralus by its look-ahead
    (the next day at today's prices, the rest at the past week's). Judged again at today's
    prices for the whole rest of the job, the move would cost more than staying: the
    running job's core carries it out as the policy decided, as the replay does."""
    trace = PriceTrace.from_store(recorded_store, os=["linux", "linux-vpc"])
    table = ThroughputTable()
    [asked] = [j for j in jobs_for_models(PUBLISHED_MODELS, 4, ["us-east-1"], table)
               if j.job.model == "CycleGAN"]
    config = BacktestConfig()
    job = replace(asked.job, checkpoint_gb=config.checkpoint_gb)
    rate = throughputs(trace, table, job.model)
    start = int(datetime(2020, 2, 22, tzinfo=timezone.utc).timestamp())
    run = Run(trace, rate, job.steps, start, 24 * 3600, config.overheads, job.checkpoint_gb,
              job.checkpoint_hours)
    policy = make_replay_policy("dynamic-aware", config.margin)
    assert policy.weighs_moves
    steps: list[tuple[int, int, float, int]] = []
    simulate(policy, run, JobState(job, "us-east-1", job.steps, None, config.overheads),
             on_step=lambda *step: steps.append(step))
    when = datetime(2020, 2, 26, tzinfo=timezone.utc)
    [(t, before, left, after)] = [s for s in steps if s[0] == int(when.timestamp())]

    view = with_typical(trace.view(t, rate), past_prices(trace)(t, policy.history_hours))
    state = JobState(job, "us-east-1", left, trace.keys[before], config.overheads)
    decided = choose(view, state, policy, config.margin, when)
    assert decided.moves and decided.held == ""
    assert (decided.current[1], decided.choice[1]) == ("eastus", "northcentralus")
    assert trace.rows[decided.choice] == after != before
    assert pays(view, state, decided.stay_usd, decided.choice_usd, config.margin).startswith(
        "it would cost")


def test_a_baseline_s_move_is_carried_out_only_when_it_pays(placed: tuple) -> None:
    """On b with an hour of work left, the dynamic baseline proposes a (cheaper by $0.20/h):
    the move's restart and lost work cost more than that saves. A running job stays; the
    baseline replayed as published (`judge=False`) moves."""
    view, state = placed
    greedy = make_policy("dynamic", scope=JOB_SCOPE)
    assert not greedy.weighs_moves
    on_b = next(k for k in view.keys if k[2] == "us-east-1b")
    sps = float(view.steps_per_second[view.row(on_b)])
    late = JobState(state.job, state.region, 3600 * sps, on_b, state.overheads)
    held = choose(view, late, greedy, 0.05, AT)
    assert held.choice[2] == "us-east-1a" and not held.moves
    assert held.held.startswith("it would cost") and carried_out(held) == on_b
    published = choose(view, late, greedy, 0.05, AT, judge=False)
    assert published.moves and carried_out(published) == held.choice
