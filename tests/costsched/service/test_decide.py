"""The service asks a policy where a job should run now, from the store's prices as of a
time: the decision a replay of the same store makes at that instant with the policy asked
among every offering the job allows (`JOB_SCOPE`)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched import catalog, service
from costsched.backtest import PriceTrace, throughputs
from costsched.model import Constraints, InvalidInput, Job
from costsched.policies import JOB_SCOPE, JobState, make_policy
from costsched.throughput import ThroughputTable

TABLE = ThroughputTable()
AT = datetime(2020, 3, 1, 6, tzinfo=timezone.utc)
JOB = Job("a3c", "python train.py", "A3C", 3e6, checkpoint_gb=2.0, checkpoint_hours=0.5)


@pytest.mark.parametrize("policy", ["multi-cloud", "dynamic", "dynamic-aware"])
def test_a_live_decision_is_the_replayed_one(recorded_store, policy: str) -> None:
    trace = PriceTrace.from_store(recorded_store, os=["linux"])
    replayed = trace.view(int(AT.timestamp()), throughputs(trace, TABLE, JOB.model))
    first = service.decide(recorded_store, JOB, home_region="us-east-1", policy=policy,
                           at=AT, table=TABLE)
    assert first.current is None and first.moves
    assert first.choice == make_policy(policy, scope=JOB_SCOPE).decide(
        replayed, JobState(JOB, "us-east-1", JOB.steps, None))
    assert first.offering.key == first.choice
    assert first.usd_per_hour == pytest.approx(replayed.prices[replayed.row(first.choice)])
    # Placed on the dearest V100 spot offering of the home region, half done: same again.
    v100 = trace.offerings[(trace.offerings["gpu_model"] == "V100")
                           & (trace.offerings["region"] == "us-east-1")
                           & (trace.offerings["market"] == "spot")].index
    dearest = trace.keys[int(v100[replayed.prices[v100].argmax()])]
    later = service.decide(recorded_store, JOB, home_region="us-east-1", policy=policy,
                           at=AT, current=dearest, steps_left=JOB.steps / 2, table=TABLE)
    proposed = make_policy(policy, scope=JOB_SCOPE).decide(
        replayed, JobState(JOB, "us-east-1", JOB.steps / 2, dearest))
    assert later.choice == proposed
    # Carried out only when it pays.
    assert later.moves == (proposed != dearest and later.choice_usd < later.stay_usd)


def test_a_decision_needs_prices_and_sane_values(tmp_path) -> None:
    with pytest.raises(InvalidInput, match="steps_left -1"):
        service.decide(str(tmp_path / "s.sqlite"), JOB, home_region="us-east-1",
                       steps_left=-1, at=AT)
    with pytest.raises(InvalidInput, match="at 2019-01-01 00:00 UTC: no prices known"):
        service.decide(str(tmp_path / "s.sqlite"), JOB, home_region="us-east-1",
                       at=datetime(2019, 1, 1, tzinfo=timezone.utc))
    # Before the bundled spot snapshot's month an empty store knows the catalog's on-demand
    # prices only: no spot offering.
    spot_only = Job("a3c", "python train.py", "A3C", 3e6,
                    constraints=Constraints(markets=("spot",)))
    with pytest.raises(InvalidInput, match="policy dynamic-aware: no offering in the job's "
                                           "constraints"):
        service.decide(str(tmp_path / "s.sqlite"), spot_only, home_region="us-east-1",
                       at=datetime(2025, 4, 1, tzinfo=timezone.utc))
    # From then on it decides on the bundled spot prices (any region: the job allows all).
    today = service.decide(str(tmp_path / "s.sqlite"), spot_only, home_region="us-east-1")
    assert today.offering.market == "spot"
    bundled = catalog.spot_observations()
    assert (today.offering.cloud, today.offering.region) in set(
        zip(bundled["cloud"], bundled["region"], strict=True))
