"""Spot risk: the expected-time formula against a simulation, and per-offering rates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from costsched import clouds
from costsched.optimize.decision import PRIOR_HOURS, expected_hours, offering_rates


def simulate(work: float, rate: float, tau: float, restart: float, runs: int,
             rng: np.random.Generator) -> float:
    """Run the job: segments of tau hours of work; a preemption loses the segment's progress
    and costs `restart` hours before running again."""
    total = np.zeros(runs)
    remaining = np.full(runs, work)
    while (remaining > 1e-12).any():
        active = remaining > 1e-12
        seg = np.minimum(tau, remaining[active])
        t_fail = rng.exponential(1 / rate, size=seg.shape)
        done = t_fail >= seg
        spent = np.where(done, seg, t_fail + restart)
        idx = np.flatnonzero(active)
        total[idx] += spent
        remaining[idx[done]] -= seg[done]
    return float(total.mean())


@pytest.mark.parametrize(("work", "rate", "tau", "restart"), [
    (10.0, 0.1, 0.5, 0.1),
    (7.3, 0.6, 1.0, 0.25),  # GCP-like rate, a partial last segment
    (3.0, 2.0, 0.25, 0.0),
])
def test_expected_hours_matches_simulation(work: float, rate: float, tau: float,
                                           restart: float) -> None:
    rng = np.random.default_rng(42)
    simulated = simulate(work, rate, tau, restart, runs=40_000, rng=rng)
    assert float(expected_hours(work, rate, tau, restart)) == pytest.approx(simulated, rel=0.01)


def test_no_preemption_means_no_overhead() -> None:
    assert expected_hours(12.5, 0.0, 0.5, 1.0) == pytest.approx(12.5)
    assert expected_hours(12.5, 1e-9, 0.5, 1.0) == pytest.approx(12.5)


def test_more_risk_or_rarer_checkpoints_take_longer() -> None:
    rates = np.array([0.0, 0.05, 0.2, 1.0])
    hours = expected_hours(10.0, rates, 0.5, 0.1)
    assert np.all(np.diff(hours) > 0)
    taus = np.array([0.1, 0.5, 2.0])
    assert np.all(np.diff(expected_hours(10.0, 0.3, taus, 0.0)) > 0)


def test_offering_rates_default_measured_and_on_demand() -> None:
    frame = pd.DataFrame({
        "cloud": ["aws", "aws", "gcp", "aws"],
        "region": ["us-east-1", "us-east-1", "us-west1", "us-east-1"],
        "gpu_model": ["K80", "V100", "V100", "K80"],
        "gpu_count": [1, 1, 1, 1],
        "market": ["spot", "spot", "spot", "on_demand"],
    })
    measured = pd.DataFrame({"cloud": ["aws"], "region": ["us-east-1"], "gpu_model": ["K80"],
                             "gpu_count": [1], "preemptions": [23], "hours": [97.3]})
    out = offering_rates(frame, measured)
    aws = clouds.default_preemption("aws").per_hour
    expected_k80 = (23 + aws * PRIOR_HOURS) / (97.3 + PRIOR_HOURS)
    assert out["preemptions_per_hour"].tolist() == pytest.approx(
        [expected_k80, aws, clouds.default_preemption("gcp").per_hour, 0.0])
    assert out["preemption_basis"].tolist() == [
        "measured: 23 in 97 h", "aws default", "gcp default", "on-demand"]
