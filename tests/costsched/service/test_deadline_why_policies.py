"""A deadline job placed on on-demand by its policy's own choice says why in that policy's
terms and figures, whatever the policy (not only spot-hedge): the real deciders over the
market of `test_deadline_why` (spot in us-east-1a at $0.90/h, preempted two minutes ago,
in us-east-1b at $2.00/h, on-demand at the catalog's $3.06/h)."""

from __future__ import annotations

from pathlib import Path

from costsched.service.jobs.decider import JobNow, decider_for, market_at
from costsched.store import PriceStore
from tests.costsched.service.test_deadline_why import (
    LOST,
    NOW,
    ON_DEMAND,
    due_in,
    store,  # noqa: F401
)

PLACED = ("placed on aws us-east-1 p3.2xlarge on-demand: the cheapest spot, aws us-east-1a "
          f"p3.2xlarge spot at $0.9000/h, has none now: {LOST}; ")


def _placed(store: PriceStore, tmp_path: Path, policy: str, due: str) -> str:  # noqa: F811
    job = JobNow(due_in(tmp_path, due), NOW, policy, "us-east-1", None, 600.0, first=True)
    placed = decider_for(policy).decide(job, market_at(store, NOW), NOW)
    assert placed.choice == ON_DEMAND
    return placed.reason


def test_the_on_demand_policy_says_it_never_takes_spot(store: PriceStore,  # noqa: F811
                                                       tmp_path: Path) -> None:
    assert _placed(store, tmp_path, "on-demand", "24h") == (
        f"on-demand (deadline 2026-03-03 12:00 UTC): {PLACED}on-demand runs a job on "
        "on-demand from its start to its end and never on spot (the cost ceiling)")


def test_uniform_progress_names_its_safety_net_with_its_figures(store: PriceStore,  # noqa: F811
                                                                tmp_path: Path) -> None:
    """Ten minutes of work due in 30: with two restarts of 15 min, the work no longer
    fits in the decisions left (one an hour)."""
    assert _placed(store, tmp_path, "uniform-progress", "30m") == (
        f"uniform-progress (deadline 2026-03-02 12:30 UTC): {PLACED}uniform-progress's "
        "safety net: the work left (10 min) and two restarts (30 min) no longer fit in the "
        "30 min to the deadline, in decisions every 1 h: on-demand to the end")
