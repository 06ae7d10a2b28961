"""`plan` of a job its deadline policy places asks launch's own decision
(`service.launch_place`) of the same store at the same instant: what both read of the store
(the preemption rates, the prices) is read once, and the plan's figures are those of the
plan alone and of launch's decision asked alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from costsched.service.launch_place import launch_placements
from costsched.service.plan import plan
from costsched.store import PriceStore

# ResNet-50's 200,190 steps within 24 h, anywhere: placed by its deadline policy.
JOB = f"""\
name: anywhere
run: {sys.executable} -c 'pass'
model: ResNet-50 (batch size 64)
steps: 200190
constraints: {{deadline: 24h}}
"""
AT = "2026-11-28T12:00:00Z"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    out = tmp_path / "anywhere.yaml"
    out.write_text(JOB)
    return out


def test_the_rates_are_read_once_for_the_plan_and_launch_s_decision(
        store: PriceStore, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    latest = store.signals.latest
    reads = []
    monkeypatch.setattr(store.signals, "latest", lambda *a, **k: reads.append(1) or latest(
        *a, **k))
    result = plan(store, [path], at=AT, launcher="local")
    assert result.launch and result.launch[0] is not None and not result.launch[0].refused
    assert len(reads) == 1


def test_launch_s_decision_in_the_plan_is_the_one_asked_alone(store: PriceStore,
                                                               path: Path) -> None:
    import pandas as pd

    result = plan(store, [path], at=AT, launcher="local")
    without = plan(store, [path], at=AT)  # (no launcher: launch's decision not asked)
    assert not without.launch
    for a, b in zip(result.jobs, without.jobs, strict=True):
        pd.testing.assert_frame_equal(a.ranked, b.ranked)  # (its preemption rates too)
    alone = launch_placements(store, [p.job for p in result.jobs], result.at, "local")
    assert alone == result.launch


def test_plan_asks_launch_s_decision_without_listing_what_launch_would_try(
        store: PriceStore, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.service.jobs import decider

    result = plan(store, [path], at=AT, launcher="local")

    def listed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("plan listed the offerings launch would try")

    monkeypatch.setattr(decider, "candidates_of", listed)  # (the one launch lists)
    again = plan(store, [path], at=AT, launcher="local")
    assert again.launch == result.launch and not again.launch[0].refused


def test_plan_says_launch_s_refusal_when_the_launcher_can_start_none(
        store: PriceStore, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import launchers
    from costsched.model import InvalidInput
    from costsched.service.jobs.launches import first_placement

    make = launchers.make_launcher

    def refusing(name: str):  # noqa: ANN202
        made = make(name)
        monkeypatch.setattr(made, "can_launch", lambda offering: False)
        return made

    monkeypatch.setattr(launchers, "make_launcher", refusing)
    result = plan(store, [path], at=AT, launcher="local")
    [placed] = result.launch
    assert placed is not None and "no offering that local can launch" in placed.refused
    job = result.jobs[0].job
    with pytest.raises(InvalidInput) as launch_s:  # launch's own words
        first_placement(store, refusing("local"), job, result.at)
    assert placed.refused == str(launch_s.value)


def test_the_prices_are_prepared_once_for_the_plan_and_launch_s_decision(
        store: PriceStore, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import import_module

    from costsched.optimize import planner
    from costsched.service.jobs import market

    plan_module = import_module("costsched.service.plan")  # (the package's `plan` is its function)

    calls = []

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        return planner.prepare(*args, **kwargs)

    monkeypatch.setattr(plan_module, "prepare", counted)
    monkeypatch.setattr(market, "prepare", counted)
    result = plan(store, [path], at=AT, launcher="local")
    assert result.launch and result.launch[0] is not None and not result.launch[0].refused
    assert len(calls) == 1


def test_launch_s_decision_in_the_plan_keeps_out_what_the_quotas_do_not_hold(
        store: PriceStore, path: Path) -> None:
    import pandas as pd

    from costsched.model import utc
    from costsched.validation import as_time

    first = plan(store, [path], at=AT, launcher="local").launch[0]
    cloud, region = first.key[0], first.key[1]
    assert cloud == "gcp"  # (the quota below is one of GCP's)
    reading = pd.DataFrame([{"scope": region, "code": "PREEMPTIBLE_NVIDIA_L4_GPUS",
                             "name": "Preemptible NVIDIA L4 GPUs", "unit": "GPUs",
                             "limit": 0.0, "used": 0.0, "source": "test"}])
    store.quotas.record("gcp", reading, at=utc(as_time(AT)))
    result = plan(store, [path], at=AT, launcher="local")
    [placed] = result.launch
    assert placed is not None and not placed.refused and placed.key != first.key
    alone = launch_placements(store, [p.job for p in result.jobs], result.at, "local")
    assert alone == result.launch
