"""A price-driven job decided live (the decider every running job is asked, over the store's
market at t) and in a replay of the same prices (the backtest engine) chooses alike at each
step of its run: the same offering, the same moves."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.backtest import BacktestConfig, PriceTrace, throughputs
from costsched.backtest.accounting import Run
from costsched.backtest.engine import make_replay_policy, simulate
from costsched.jobspec import ResolvedJob
from costsched.model import Constraints, Job
from costsched.policies import JobState
from costsched.service.jobs.decider import JobNow, decider_for, market_at
from costsched.throughput import ThroughputTable

TABLE = ThroughputTable()
# A long job (months of work) started on 2020-02-16; on 2020-03-23 (period 36) a move
# pays. The periods around it are asked live.
START = datetime(2020, 2, 16, tzinfo=timezone.utc)
ASKED = slice(30, 40)
PERIOD_S = 24 * 3600


@pytest.fixture(scope="module")
def replay(recorded_store) -> PriceTrace:  # noqa: ANN001
    return PriceTrace.from_store(recorded_store, os=["linux"])


def test_a_price_driven_job_chooses_alike_live_and_in_replay_at_each_step(
        recorded_store, replay: PriceTrace) -> None:  # noqa: ANN001
    model = "Transformer (batch size 256)"
    # One cloud, one region, spot, one GPU: the scope the replayed policy and a running
    # job's decider both choose in.
    job = Job("live", "", model, 2e7, checkpoint_gb=1.0, checkpoint_hours=0.5,
              constraints=Constraints(clouds=("aws",), regions=("us-east-1",),
                                      markets=("spot",), gpu_counts=(1,)))
    config = BacktestConfig()
    rate = throughputs(replay, TABLE, model)
    run = Run(replay, rate, job.steps, int(START.timestamp()), PERIOD_S, config.overheads,
              job.checkpoint_gb, job.checkpoint_hours)
    steps: list[tuple[int, int, float, int]] = []
    simulate(make_replay_policy("dynamic-aware", config.margin), run,
             JobState(job, "us-east-1", job.steps, None, config.overheads),
             on_step=lambda *step: steps.append(step))
    steps = steps[ASKED]
    assert len(steps) == ASKED.stop - ASKED.start

    resolved = ResolvedJob(job=job, table=TABLE, checkpoint_hours=job.checkpoint_hours,
                           restart_hours=config.overheads.restart_hours(job.checkpoint_gb),
                           envs={}, source="test")
    decider = decider_for("dynamic-aware", margin=config.margin, overheads=config.overheads)
    moves = 0
    for t, before, left, replayed in steps:
        when = datetime.fromtimestamp(t, timezone.utc)
        current = None if before < 0 else replay.keys[before]
        asked = JobNow(resolved, START, "dynamic-aware", "us-east-1", current, left)
        live = decider.decide(asked, market_at(recorded_store, when), when)
        chosen = live.choice if live.moves else current
        assert chosen == replay.keys[replayed], (when, current)
        moves += current is not None and chosen != current
    # Not vacuous: the job moves in these periods.
    assert moves > 0
