"""A deadline job's decision says why, in dollars and in its policy's terms: a stay names
the cheaper spot it leaves out, at the figure `migrate --to` gives a move there, and why
it has none now; a placement on on-demand says why spot was not taken. The real deciders
over a SQLite store with chosen prices: spot in us-east-1a at $0.90/h, preempted two
minutes ago, in us-east-1b at $2.00/h, on-demand at the catalog's $3.06/h."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.jobspec import ResolvedJob, parse, resolve
from costsched.model import Offering
from costsched.service.decide import parse_offering
from costsched.service.jobs.decider import AskedDecider, JobNow, decider_for, market_at
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable
from tests.costsched.service.test_jobs import offer

NOW = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
ON_DEMAND = ("aws", "us-east-1", "", "p3.2xlarge", "on_demand", "linux")
LOST = ("spot there was preempted at 11:58 UTC, and no spot is taken in a zone for 30 min "
        "after a preemption or a capacity error there")


@pytest.fixture()
def store(tmp_path: Path):  # noqa: ANN201
    opened = PriceStore(str(tmp_path / "store.sqlite"))
    opened.ingest(pd.DataFrame([offer(z, p, NOW - timedelta(hours=1))
                                for z, p in {"us-east-1a": 0.9, "us-east-1b": 2.0}.items()]))
    opened.availability.record(Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge",
                                        "spot", "V100", 1, 8, 61.0), "preempted",
                               at=NOW - timedelta(minutes=2), detail="test")
    yield opened
    opened.dispose()


def due_in(tmp_path: Path, deadline: str) -> ResolvedJob:
    """Ten minutes of work on a V100 (600 steps at 1 step/s), due `deadline` after it is
    created."""
    path = tmp_path / "due.yaml"
    path.write_text(yaml.safe_dump({
        "name": "due", "run": "true", "throughputs": {"V100": 1}, "steps": 600,
        "checkpoint": {"interval_minutes": 1, "size_gb": 0.01},
        "constraints": {"regions": ["us-east-1"], "gpu_models": ["V100"],
                        "deadline": deadline}}))
    return resolve(parse(yaml.safe_load(path.read_text()), str(path)), ThroughputTable(), NOW)


def test_a_stay_names_the_cheaper_spot_it_leaves_out_and_why(store: PriceStore,
                                                              tmp_path: Path) -> None:
    """On on-demand with 540 steps left: us-east-1b's spot, the best alternative with
    spot now, costs more than staying; us-east-1a's, cheaper than both, is left out, said
    at the figure a move there asked for gives."""
    job = JobNow(due_in(tmp_path, "30m"), NOW - timedelta(minutes=1), "spot-hedge",
                 "us-east-1", ON_DEMAND, 540.0)
    market = market_at(store, NOW)
    stay = decider_for("spot-hedge").decide(job, market, NOW)
    assert not stay.moves
    assert stay.reason == (
        "spot-hedge (deadline 2026-03-02 12:29 UTC): stay on aws us-east-1 p3.2xlarge "
        "on-demand: $0.4590 to finish here; $0.8233 on aws us-east-1b p3.2xlarge spot, the "
        "best alternative with spot now, including the move of $0.5167 (egress $0.0000, "
        "restart $0.5000, lost work $0.0167, overlap $0.0000); aws us-east-1a p3.2xlarge "
        f"spot, $0.3705 including the move, is left out: {LOST}; restart assumed: 0.25 h "
        "at $2.0000/h, 10 min boot and set-up ([migration] restart_minutes) + 5 min warm-up "
        "([migration] warmup_minutes) + 0.08 s to copy the 0.01 GB checkpoint at 1 Gbit/s "
        "([migration] transfer_gbps); lost work assumed: 0.5 "
        "min, half the checkpoint interval of 1 min (checkpoint.interval_minutes; "
        "[migration] lost_work_minutes sets another figure): the step of its newest "
        "checkpoint is not known")
    asked = AskedDecider(parse_offering("aws us-east-1a p3.2xlarge spot")).decide(
        job, market, NOW)
    assert "$0.3705 there including the move" in asked.reason  # one figure for one move


def test_a_placement_on_on_demand_says_why_spot_was_not_taken(store: PriceStore,
                                                              tmp_path: Path) -> None:
    """Due in 30 minutes, with a start of 15: spot-hedge risks no spot with less time
    than its next decision, in an hour, and waiting could leave the job late."""
    job = JobNow(due_in(tmp_path, "30m"), NOW, "spot-hedge", "us-east-1", None, 600.0,
                 first=True)
    placed = decider_for("spot-hedge").decide(job, market_at(store, NOW), NOW)
    assert placed.choice == ON_DEMAND
    assert placed.reason == (
        "spot-hedge (deadline 2026-03-02 12:30 UTC): placed on aws us-east-1 p3.2xlarge "
        "on-demand: the cheapest spot, aws us-east-1a p3.2xlarge spot at $0.9000/h, has "
        f"none now: {LOST}; spot-hedge would wait for spot (it risks no spot now: 30 min "
        "to the deadline is less than its next decision, in 1 h, the work left (10 min) "
        "and a start (15 min)), and a wait could leave it late: at its next decision, in "
        "1 h, finishing on-demand would need 25 min (the work left and a restart), and the "
        "deadline, 30 min away, comes first")


def test_a_placement_on_spot_says_no_more(store: PriceStore, tmp_path: Path) -> None:
    """With a day of slack, spot-hedge starts the spot that has it: no why is owed."""
    job = JobNow(due_in(tmp_path, "24h"), NOW, "spot-hedge", "us-east-1", None, 600.0,
                 first=True)
    placed = decider_for("spot-hedge").decide(job, market_at(store, NOW), NOW)
    assert placed.reason == ("spot-hedge (deadline 2026-03-03 12:00 UTC): placed on aws "
                             "us-east-1b p3.2xlarge spot")


def test_with_no_spot_anywhere_a_placement_says_so(store: PriceStore, tmp_path: Path) -> None:
    """us-east-1b's spot preempted too: with six hours of slack spot-hedge would wait,
    but a job is not left without an instance."""
    store.availability.record(Offering("aws", "us-east-1", "us-east-1b", "p3.2xlarge",
                                       "spot", "V100", 1, 8, 61.0), "preempted",
                              at=NOW - timedelta(minutes=2), detail="test")
    job = JobNow(due_in(tmp_path, "6h"), NOW, "spot-hedge", "us-east-1", None, 600.0,
                 first=True)
    placed = decider_for("spot-hedge").decide(job, market_at(store, NOW), NOW)
    assert placed.reason == (
        "spot-hedge (deadline 2026-03-02 18:00 UTC): placed on aws us-east-1 p3.2xlarge "
        "on-demand: the cheapest spot, aws us-east-1a p3.2xlarge spot at $0.9000/h, has "
        f"none now: {LOST}; no zone it allows has spot now, and a job is not left without "
        "an instance to wait for it")


def test_a_bridge_over_a_wait_for_spot_says_what_it_saves_and_costs(tmp_path: Path) -> None:
    """us-east-1a alone, preempted five minutes ago; an hour of work due in two: spot-hedge
    bridges the wait on on-demand. The bridge costs the on-demand premium over the hour,
    $2.16, and its start, 15 min at $3.06/h: $2.93."""
    opened = PriceStore(str(tmp_path / "alone.sqlite"))
    opened.ingest(pd.DataFrame([offer("us-east-1a", 0.9, NOW - timedelta(hours=1))]))
    opened.availability.record(Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge",
                                        "spot", "V100", 1, 8, 61.0), "preempted",
                               at=NOW - timedelta(minutes=5), detail="test")
    path = tmp_path / "hour.yaml"
    path.write_text(yaml.safe_dump({
        "name": "hour", "run": "true", "throughputs": {"V100": 1}, "steps": 3600,
        "checkpoint": {"size_gb": 1, "interval_minutes": 30},
        "constraints": {"regions": ["us-east-1"], "deadline": "2h"}}))
    resolved = resolve(parse(yaml.safe_load(path.read_text()), str(path)), ThroughputTable(),
                       NOW)
    job = JobNow(resolved, NOW, "spot-hedge", "us-east-1", None, 3600.0, first=True)
    placed = decider_for("spot-hedge").decide(job, market_at(opened, NOW), NOW)
    opened.dispose()
    assert placed.reason == (
        "spot-hedge (deadline 2026-03-02 14:00 UTC): placed on aws us-east-1 p3.2xlarge "
        "on-demand: the cheapest spot, aws us-east-1a p3.2xlarge spot at $0.9000/h, has "
        "none now: spot there was preempted at 11:55 UTC, and no spot is taken in a zone for "
        "30 min after a preemption or a capacity error there; spot-hedge bridges a wait for "
        "spot on on-demand: over the wait of 1 h it saves slack worth $15.07, more than the "
        "$2.93 it costs beyond spot; it risks no spot now: 2 h to the deadline is less than "
        "its next decision, in 1 h, the work left (1 h) and a start (15 min)")
