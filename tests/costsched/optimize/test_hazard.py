"""The preemption hazard per offering: signal priors, pooled observations, and a ranking
that the signals change at equal prices."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

from costsched import clouds, service
from costsched.jobspec import parse
from costsched.optimize import hazard
from costsched.optimize.hazard import ANCHOR_PER_HOUR, PRIOR_HOURS, Evidence
from costsched.service.decide import decide
from costsched.store import PriceStore
from costsched.store.signals import SIGNAL_COLUMNS

AT = datetime(2026, 11, 20, 12, tzinfo=timezone.utc)
AWS = clouds.default_preemption("aws").per_hour


def offer(region: str, zone: str, price: float = 0.9) -> dict:
    return dict(cloud="aws", region=region, zone=zone, instance_type="p3.2xlarge",
                market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8,
                memory_gb=61.0, usd_per_hour=price, effective_at=AT, source="test")


def advisor(region: str, bucket: int, at: datetime = AT) -> tuple:
    return ("aws", region, "", "p3.2xlarge", "linux", "advisor", float(bucket),
            hazard.BUCKET_LABELS[bucket], at, "test")


def signals(*rows: tuple) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=SIGNAL_COLUMNS)


def frame(*zones: tuple[str, str]) -> pd.DataFrame:
    return pd.DataFrame([offer(r, z) for r, z in zones])


def test_the_stated_mappings() -> None:
    assert [hazard.bucket_rate(i) for i in range(5)] == pytest.approx(
        [ANCHOR_PER_HOUR * s / 0.25 for s in (0.025, 0.075, 0.125, 0.175, 0.25)])
    assert hazard.placement_rate(10) == pytest.approx(ANCHOR_PER_HOUR / 10)
    assert hazard.placement_rate(1) == pytest.approx(ANCHOR_PER_HOUR)
    # Two signals: their geometric mean; a Windows one is not a training box's.
    sig = signals(advisor("us-east-1", 4),
                  ("aws", "us-east-1", "", "p3.2xlarge", "linux", "placement", 10.0, "10/10",
                   AT, "test"),
                  ("aws", "us-east-1", "", "p3.2xlarge", "windows", "advisor", 0.0, "<5%",
                   AT, "test"))
    rate, label = hazard.priors(frame(("us-east-1", "us-east-1a")), sig)
    assert rate[0] == pytest.approx(np.sqrt(ANCHOR_PER_HOUR * ANCHOR_PER_HOUR / 10))
    assert label[0] == "advisor >20% + placement score 10"
    # No signal: the cloud's default.
    rate, label = hazard.priors(frame(("us-west-2", "us-west-2a")), sig)
    assert (rate[0], label[0]) == (AWS, "aws default")


def test_observations_pool_from_zone_to_cloud_and_are_counted_once() -> None:
    f = frame(("us-east-1", "us-east-1a"), ("us-east-1", "us-east-1b"),
              ("us-west-2", "us-west-2a"))
    observed = pd.DataFrame({"cloud": ["aws"], "region": ["us-east-1"],
                             "zone": ["us-east-1a"], "instance_type": ["p3.2xlarge"],
                             "gpu_model": ["V100"], "gpu_count": [1],
                             "preemptions": [10], "hours": [20.0]})
    out = hazard.offering_hazards(f, Evidence(observed))
    own = (10 + AWS * PRIOR_HOURS) / (20 + PRIOR_HOURS)
    # The zone's own data once (not once per level), the others borrow it as theirs.
    assert out["preemptions_per_hour"].tolist() == pytest.approx([own] * 3)
    assert out["preemption_basis"].tolist() == [
        "measured in zone: 10 in 20 h; prior aws default",
        "measured in region: 10 in 20 h; prior aws default",
        "pooled from instance type: 10 in 20 h; prior aws default"]
    # With the second zone's own quiet hours, it drops below its neighbour.
    quiet = pd.concat([observed, observed.assign(zone="us-east-1b", preemptions=0,
                                                 hours=200.0)])
    out = hazard.offering_hazards(f, Evidence(quiet))["preemptions_per_hour"].to_numpy()
    assert out[1] < out[2] < out[0]
    lines = hazard.explain(f.iloc[[1]], Evidence(quiet))[0]
    assert lines[-1].endswith(f"= {out[1]:.4g}/h")
    assert any(line.startswith("zone: 0 preemptions in 200.00 h") for line in lines)


def test_same_price_different_signals_change_the_ranking(store: PriceStore) -> None:
    store.ingest(pd.DataFrame([offer("us-east-1", "us-east-1a", 0.90),
                               offer("us-west-2", "us-west-2a", 0.92)]))
    spec = parse({"name": "r", "model": "ResNet-50 (batch size 64)", "steps": 200_000,
                  "constraints": {"markets": ["spot"], "regions": ["us-east-1", "us-west-2"]},
                  "checkpoint": {"interval_minutes": 60}})

    def ranking() -> list[str]:
        return service.plan(store, spec, at=AT).ranking("r")["region"].tolist()

    # Without signals both get the AWS default: the price decides.
    assert ranking() == ["us-east-1", "us-west-2"]
    # The Advisor puts us-east-1 in its top bucket, us-west-2 in its lowest: the dearer
    # but calmer offering now costs less in expectation.
    store.signals.add(signals(advisor("us-east-1", 4), advisor("us-west-2", 0)))
    result = service.plan(store, spec, at=AT)
    ranked = result.ranking("r")
    assert ranked["region"].tolist() == ["us-west-2", "us-east-1"]
    assert ranked["preemption_basis"].tolist() == ["advisor <5%", "advisor >20%"]
    assert ranked["preemptions_per_hour"].tolist() == pytest.approx(
        [hazard.bucket_rate(0), hazard.bucket_rate(4)])
    explained = result.explain("aws us-east-1a p3.2xlarge spot", "r")
    assert "prior r0 = 0.0854/h (advisor >20%)" in explained[1]
    [line] = [x for x in explained if x.startswith("expected cost = ")]
    assert line.endswith(f" h x $0.9000/h = ${ranked['expected_cost'].iloc[1]:.4f}")
    # The hours as written times the price as written make the amount as written.
    shown = float(line.split(" = ")[1].split(" h")[0].replace(",", ""))
    assert abs(shown - ranked["expected_hours"].iloc[1]) < 0.01
    assert f"{shown * 0.9:.4f}" == f"{ranked['expected_cost'].iloc[1]:.4f}", line


def test_the_live_decision_reads_the_same_hazard(store: PriceStore) -> None:
    store.ingest(pd.DataFrame([offer("us-east-1", "us-east-1a", 0.90),
                               offer("us-east-1", "us-east-1b", 0.92)]))
    spec = parse({"name": "r", "model": "ResNet-50 (batch size 64)", "steps": 200_000,
                  "constraints": {"markets": ["spot"], "regions": ["us-east-1"]},
                  "checkpoint": {"interval_minutes": 60}})
    job = spec_job(spec)
    assert decide(store, job, home_region="us-east-1", at=AT).choice[2] == "us-east-1a"
    # Zone placement scores: 1 in the cheaper zone, 10 in the other.
    store.signals.add(signals(
        ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "linux", "placement", 1.0, "1/10",
         AT, "test"),
        ("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "linux", "placement", 10.0, "10/10",
         AT, "test")))
    assert decide(store, job, home_region="us-east-1", at=AT).choice[2] == "us-east-1b"


def spec_job(spec):  # noqa: ANN001, ANN201
    from costsched.jobspec import resolve
    from costsched.throughput import ThroughputTable

    return resolve(spec, ThroughputTable.load(), AT).job
