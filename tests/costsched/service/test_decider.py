"""One decider per job: a launch, a recovery and a move of the same job in the same market
choose alike, whatever its policy; a move is priced once, as the bill prices it."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.amounts import usd
from costsched.jobspec import parse, resolve
from costsched.optimize.decision import Overheads, Place, egress_usd_per_gb
from costsched.service.deadline_jobs import DEFAULT_DEADLINE_POLICY
from costsched.service.decide import Ask, decide_all
from costsched.service.jobs.decider import JobNow, decider_for, market_at
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable
from tests.costsched.service.test_deadline_jobs import WORK_HOURS, deadline_spec
from tests.costsched.service.test_jobs import offer, write_spec

NOW = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)


@pytest.fixture()
def store(tmp_path: Path):  # noqa: ANN201
    opened = PriceStore(str(tmp_path / "store.sqlite"))
    yield opened
    opened.dispose()


def key(zone: str, region: str = "us-east-1") -> tuple:
    return ("aws", region, zone, "p3.2xlarge", "spot", "linux")


@pytest.mark.parametrize("kind", ["price", "deadline"])
def test_a_launch_a_recovery_and_a_move_choose_alike(store: PriceStore, tmp_path: Path,
                                                      kind: str) -> None:
    at = NOW - timedelta(hours=1)
    store.ingest(pd.DataFrame([offer(z, p, at) for z, p in
                               {"us-east-1a": 1.0, "us-east-1b": 2.0, "us-east-1c": 2.5}.items()]))
    path = (write_spec(tmp_path) if kind == "price" else
            deadline_spec(tmp_path, "due", WORK_HOURS + 10))
    resolved = resolve(parse(yaml.safe_load(path.read_text()), str(path)), ThroughputTable(),
                       NOW)
    policy = "dynamic-aware" if kind == "price" else "spot-anywhere"
    decider = decider_for(policy)
    market = market_at(store, NOW)
    steps = resolved.job.steps

    def ask(current: tuple | None, **kw: object) -> object:
        job = JobNow(resolved, NOW, policy, "us-east-1", current, steps, **kw)  # type: ignore[arg-type]
        return decider.decide(job, market, NOW)

    launched = ask(None, first=True)
    recovered = ask(None, lost=frozenset({key("us-east-1c")}))
    moved = ask(key("us-east-1c"))
    assert launched.choice == recovered.choice == moved.choice == key("us-east-1a")
    assert moved.moves and moved.move is not None and launched.move is None
    # The fallbacks rank the same way for a launch and a recovery.
    assert [o.key for o, _ in launched.alternatives][:1] == \
        [o.key for o, _ in recovered.alternatives][:1]


def test_the_default_deadline_policy_recovers_on_spot_while_any_zone_has_it(
        store: PriceStore, tmp_path: Path) -> None:
    """spot-hedge, the default, with a store that has watched no market (its prior
    speaks). A launch takes spot in zone a ($1.00/h). A recovery from a preemption there,
    with b out of capacity too, takes c's spot ($2.50/h, under on-demand's $3.06/h) with 6
    hours of slack for 41.7 of work as with 30: by default it never trades spot it can
    start now for on-demand (the hedge threshold chosen out of sample). With no spot in
    any zone, the recovery is not left waiting: on-demand in the checkpoint's region."""
    at = NOW - timedelta(hours=1)
    store.ingest(pd.DataFrame([offer(z, p, at) for z, p in
                               {"us-east-1a": 1.0, "us-east-1b": 2.0, "us-east-1c": 2.5}.items()]))
    decider, market = decider_for(DEFAULT_DEADLINE_POLICY), market_at(store, NOW)
    assert DEFAULT_DEADLINE_POLICY == "spot-hedge"
    lost = frozenset({key("us-east-1a"), key("us-east-1b")})

    def ask(slack_hours: float, **kw: object) -> object:
        path = deadline_spec(tmp_path, f"due-{slack_hours:g}", WORK_HOURS + slack_hours)
        resolved = resolve(parse(yaml.safe_load(path.read_text()), str(path)),
                           ThroughputTable(), NOW)
        job = JobNow(resolved, NOW, DEFAULT_DEADLINE_POLICY, "us-east-1", None,
                     resolved.job.steps, **kw)  # type: ignore[arg-type]
        return decider.decide(job, market, NOW)

    assert ask(6, first=True).choice == key("us-east-1a")
    assert ask(6, lost=lost).choice == ask(30, lost=lost).choice == key("us-east-1c")
    stranded = ask(6, lost=lost | {key("us-east-1c")})
    assert stranded.choice[4] == "on_demand" and stranded.choice[1] == "us-east-1"
    assert stranded.reason.startswith("spot-hedge (deadline ")


def test_a_50_gb_checkpoint_moved_across_regions_pays_its_egress_once(store: PriceStore,
                                                                      tmp_path: Path) -> None:
    at = NOW - timedelta(hours=1)
    east, west = dict(offer("us-east-1a", 3.0, at)), dict(offer("us-west-2a", 1.0, at))
    west["region"] = "us-west-2"
    store.ingest(pd.DataFrame([east, west]))
    spec = yaml.safe_load(write_spec(tmp_path).read_text())
    spec["constraints"]["regions"] = ["us-east-1", "us-west-2"]
    resolved = resolve(parse(spec, "train.yaml"), ThroughputTable(), NOW)
    # The spec says 1 GB; the job's newest checkpoint measures 50 GB: the move copies that.
    job = JobNow(resolved, NOW, "dynamic-aware", "us-east-1", key("us-east-1a"),
                 resolved.job.steps, checkpoint_gb=50.0)
    moved = decider_for("dynamic-aware").decide(job, market_at(store, NOW), NOW)
    assert moved.choice == key("us-west-2a", "us-west-2") and moved.moves

    rate = egress_usd_per_gb(Place("aws", "us-east-1", "us-east-1a"),
                             Place("aws", "us-west-2", "us-west-2a"))
    assert rate > 0
    assert moved.move.egress_usd == pytest.approx(Overheads().egress_gb(50.0) * rate)
    # The rest of the job there, priced as a first placement there (no move), plus the
    # move's price once: the figure the decision compares and the reason shows.
    big = replace(resolved.job, checkpoint_gb=50.0)
    [there] = decide_all(store, [Ask(big, "us-east-1", None, big.steps, resolved.table)],
                         at=NOW)
    assert there.choice == moved.choice
    assert moved.choice_usd == pytest.approx(there.choice_usd + moved.move.total)
    assert f"egress {usd(moved.move.egress_usd)}" in moved.reason
    assert usd(moved.choice_usd) in moved.reason
