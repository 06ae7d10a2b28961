"""Live decisions about a running job: chosen among every offering the job's constraints
allow, and a move only when it pays (the expected cost of the rest of the job there, the
move included, below staying by the margin)."""

from __future__ import annotations

import re
import sys
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from costsched.model import Constraints, InvalidInput, Job
from costsched.optimize.decision import Overheads, move_cost, outcomes
from costsched.policies import JOB_SCOPE, POLICIES, JobState, make_policy, view_from_prices
from costsched.policies.history import with_typical
from costsched.service import decide
from costsched.service.decide import OFFERING_EXAMPLE, choose, parse_offering
from costsched.service.jobs.decider import move_reason
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable
from tests.real_jobs import SETTLE

TABLE = ThroughputTable()
AT = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
TWO_REGIONS = Constraints(regions=("us-west-2", "us-east-1"), markets=("spot",))
JOB = Job("a3c", "python train.py", "A3C", 3e6, checkpoint_gb=1.0, checkpoint_hours=0.5,
          constraints=TWO_REGIONS)


def row(zone: str, price: float, *, market: str = "spot", instance_type: str = "p3.2xlarge",
        gpus: int = 1, cloud: str = "aws", at: datetime = AT - timedelta(hours=1)) -> dict:
    return dict(cloud=cloud, region=zone[:-1] if market == "spot" else zone,
                zone=zone if market == "spot" else "", instance_type=instance_type,
                market=market, os="linux", gpu_model="V100", gpu_count=gpus, vcpus=8 * gpus,
                memory_gb=61.0 * gpus, usd_per_hour=price, effective_at=at, source="test")


@pytest.fixture()
def store(tmp_path) -> PriceStore:  # noqa: ANN001
    opened = PriceStore(str(tmp_path / "store.sqlite"))
    yield opened
    opened.dispose()


def key(zone: str) -> tuple:
    return ("aws", zone[:-1], zone, "p3.2xlarge", "spot", "linux")


def test_a_job_recovered_into_another_region_is_not_moved_back_at_a_loss(store) -> None:
    # Recovered into us-east-1b, the cheapest zone the job allows; its home region's zones
    # are five times dearer. Moving back home would cost more than staying.
    store.ingest(pd.DataFrame([row("us-west-2a", 3.0), row("us-west-2b", 3.1),
                               row("us-east-1b", 0.6)]))
    found = decide(store, JOB, home_region="us-west-2", current=key("us-east-1b"),
                   steps_left=JOB.steps / 2, at=AT, table=TABLE, margin=0.0)
    assert not found.moves, (found.choice, found.stay_usd, found.choice_usd)
    assert found.stay_usd > 0


def test_a_cheaper_zone_in_another_region_of_the_same_cloud_is_a_choice(store) -> None:
    # The job runs at home (us-west-2a); the cheapest zone it allows is in us-east-1.
    store.ingest(pd.DataFrame([row("us-west-2a", 3.0), row("us-west-2b", 3.1),
                               row("us-east-1b", 0.6)]))
    found = decide(store, JOB, home_region="us-west-2", current=key("us-west-2a"),
                   steps_left=JOB.steps / 2, at=AT, table=TABLE, margin=0.0)
    assert found.moves and found.choice == key("us-east-1b")
    assert found.choice_usd < found.stay_usd
    # Outside the job's regions: never, however cheap.
    store.ingest(pd.DataFrame([row("eu-west-1a", 0.1, at=AT - timedelta(minutes=30))]))
    again = decide(store, JOB, home_region="us-west-2", current=key("us-west-2a"),
                   steps_left=JOB.steps / 2, at=AT, table=TABLE, margin=0.0)
    assert again.choice == key("us-east-1b")


def test_the_margin_holds_a_move_that_saves_too_little(store) -> None:
    store.ingest(pd.DataFrame([row("us-west-2a", 1.0), row("us-east-1b", 0.99)]))
    found = decide(store, JOB, home_region="us-west-2", current=key("us-west-2a"),
                   steps_left=JOB.steps / 2, at=AT, table=TABLE, margin=0.5)
    assert not found.moves and found.stay_usd > 0
    # With no margin the same 1% saving, after the move's cost, is a move if it pays.
    free = decide(store, JOB, home_region="us-west-2", current=key("us-west-2a"),
                  steps_left=JOB.steps / 2, at=AT, table=TABLE, margin=0.0)
    assert free.moves == (free.choice_usd < free.stay_usd and free.choice != key("us-west-2a"))


def test_an_offering_is_written_as_the_tables_print_it() -> None:
    name = parse_offering("aws us-west-2b p3.2xlarge spot")
    assert (name.cloud, name.location, name.instance_type, name.market) == (
        "aws", "us-west-2b", "p3.2xlarge", "spot")
    assert parse_offering("gcp:us-central1:n1-standard-8:on-demand").market == "on_demand"
    assert str(parse_offering("aws:us-east-1:p3.2xlarge:on_demand")) == (
        "aws us-east-1 p3.2xlarge on-demand")
    for bad in ("p3.2xlarge", "aws us-west-2b p3.2xlarge", ""):  # not in four parts
        with pytest.raises(InvalidInput) as caught:
            parse_offering(bad)
        message = str(caught.value)
        assert "\n" not in message and f"'{OFFERING_EXAMPLE}'" in message
    # In four parts, one misspelt: that one is named, with the close names, and no example.
    for bad, says in (("aws us-west-2b p3.2xlarge cheap", "market 'cheap': expected one of "
                       "on-demand, spot"),
                      ("ibm x y spot", "cloud 'ibm': expected one of aws, gcp, azure"),
                      ("aws us-west-2b p3.2xlarge spotty", "market 'spotty': expected one of "
                       "on-demand, spot; did you mean 'spot'?")):
        with pytest.raises(InvalidInput) as caught:
            parse_offering(bad)
        assert str(caught.value) == f"offering {bad!r}: {says}"


def test_the_example_offering_is_priced_in_the_bundled_prices() -> None:
    """The example every "how to write an offering" line gives can be moved to as it is."""
    from costsched.catalog import spot_observations

    cloud, location, instance_type, market = OFFERING_EXAMPLE.split()
    assert market == "spot"
    prices = spot_observations()
    here = prices[(prices["cloud"] == cloud) & (prices["instance_type"] == instance_type)
                  & ((prices["zone"] == location)
                     | ((prices["zone"] == "") & (prices["region"] == location)))]
    assert len(here) >= 1


# --- the invariant --------------------------------------------------------------------------

ZONES = ("us-west-2a", "us-west-2b", "us-east-1a", "us-east-1b")
SHAPES = (("p3.2xlarge", 1), ("p3.8xlarge", 4), ("p3.16xlarge", 8))


@st.composite
def markets(draw: st.DrawFn) -> tuple[pd.DataFrame, np.ndarray]:
    """Spot offerings of several zones, shapes and both clouds' regions, on-demand ones per
    region, each with a random price now and a random typical (forecast) price."""
    rows = []
    for zone in ZONES:
        for instance_type, gpus in SHAPES:
            if draw(st.booleans()):
                price = draw(st.floats(0.2, 6.0)) * gpus
                rows.append(row(zone, price, instance_type=instance_type, gpus=gpus))
    for region in ("us-west-2", "us-east-1"):
        rows.append(row(region, 3.06, market="on_demand"))
    if draw(st.booleans()):
        rows.append(row("us-central1a", draw(st.floats(0.2, 6.0)), cloud="gcp",
                        instance_type="n1-standard-8"))
    frame = pd.DataFrame(rows)
    typical = np.array([draw(st.floats(0.1, 8.0)) for _ in range(len(frame))])
    return frame, typical


def _spiked_market() -> tuple[pd.DataFrame, np.ndarray]:
    """Every price far above its past week's ($1/h), a 1-GPU GCP spot offering at $3/h
    often preempted: dynamic-aware's look-ahead moves a job off on-demand ($3.06/h) there,
    for a move that today's prices for the rest of the job price $29 dearer than staying."""
    rows = [row(zone, 2.0 * gpus, instance_type=kind, gpus=gpus)
            for zone, kind, gpus in (("us-west-2a", "p3.8xlarge", 4),
                                     ("us-west-2a", "p3.16xlarge", 8),
                                     ("us-west-2b", "p3.8xlarge", 4),
                                     ("us-west-2b", "p3.16xlarge", 8),
                                     ("us-east-1a", "p3.16xlarge", 8),
                                     ("us-east-1b", "p3.8xlarge", 4))]
    rows += [row(region, 3.06, market="on_demand") for region in ("us-west-2", "us-east-1")]
    rows.append(row("us-central1a", 3.0, cloud="gcp", instance_type="n1-standard-8"))
    return pd.DataFrame(rows), np.ones(len(rows))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(market=_spiked_market(), pick=0, margin=0.0, steps_left=808765.0, regions=(),
         market_kinds=(), counts=(), policy="dynamic-aware", gb=0.0)
@given(market=markets(), pick=st.integers(0, 64),
       margin=st.sampled_from([0.0, 0.05, 0.3]),
       steps_left=st.floats(1e3, 3e6),
       regions=st.sampled_from([(), ("us-west-2",), ("us-west-2", "us-east-1")]),
       market_kinds=st.sampled_from([(), ("spot",), ("on_demand",)]),
       counts=st.sampled_from([(), (1,), (1, 8)]),
       policy=st.sampled_from(sorted(p for p in POLICIES if p != "cheapest-hourly")),
       gb=st.floats(0.0, 50.0))
def test_no_planned_move_is_to_an_offering_dearer_than_staying(
        market, pick, margin, steps_left, regions, market_kinds, counts, policy,
        gb) -> None:
    frame, typical = market
    constraints = Constraints(regions=regions, markets=market_kinds, gpu_counts=counts)
    job = Job("j", "true", "A3C", 3e6, checkpoint_gb=gb, constraints=constraints)
    view = view_from_prices(frame, AT, TABLE, job.model)
    view = with_typical(view, typical)
    chosen = make_policy(policy, scope=JOB_SCOPE, margin=margin)
    allowed = np.flatnonzero(chosen.candidates(view, JobState(job, "us-west-2", 1, None)))
    if len(allowed) == 0:
        return
    here = int(allowed[pick % len(allowed)])
    state = JobState(job, "us-west-2", steps_left, view.key(here), Overheads())
    found = choose(view, state, chosen, margin, AT)
    # Independently: the decision model's expected cost of the rest here and on each row.
    cost = outcomes(steps_left, view.steps_per_second, view.prices,
                    view.preemptions_per_hour, job.checkpoint_hours,
                    state.restart_hours).cost
    moving = move_cost(state.overheads, view.prices, here, view.egress_from(here),
                       job.checkpoint_gb, job.checkpoint_hours)
    stay = cost[here]
    # The fallbacks a move tries are judged by that model; so is the choice, but for a
    # policy that weighs its moves itself (dynamic-aware: the next period at today's
    # prices, the rest at the past week's), whose own choice is carried out as it decided:
    # it may be dearer at today's prices for the whole rest of the job, and then says so.
    planned = [o.key for o, _ in found.alternatives]
    if found.moves and not chosen.weighs_moves:
        planned.append(found.choice)
    for target in [*planned, *([found.choice] if found.moves else [])]:
        assert view.row(target) != here
        assert target[1] in (regions or (target[1],))
    for target in planned:
        there = view.row(target)
        assert cost[there] + moving[there] < stay, (policy, target, cost[there], stay)
    if found.moves:
        assert found.choice == chosen.decide(view, state)
        assert found.choice_usd == pytest.approx(cost[view.row(found.choice)]
                                                 + moving[view.row(found.choice)])
        assert found.stay_usd == pytest.approx(stay)
        reason = move_reason(found, margin)
        assert "saves -" not in reason
        if found.choice_usd >= found.stay_usd:
            assert chosen.weighs_moves and "dearer at today's prices" in reason, reason


# --- a move the user asks for ----------------------------------------------------------------


def test_migrate_to_moves_where_asked_through_the_state_machine(tmp_path) -> None:
    from costsched.service import jobs as service
    from launchers.local import LocalLauncher
    from tests.costsched.service.test_jobs import (
        TRAIN,
        TRAIN_ARGS,
        LiveCounter,
        set_prices,
        write_spec,
        zone_of,
    )

    store = PriceStore(str(tmp_path / "store.sqlite"))
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5)
    start = datetime.now(timezone.utc) - timedelta(hours=1)
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0}, start)
    # The job holds after a step, checkpointed, while this file exists: it is moved while
    # it trains, never after it ended, however slowly the machine runs the asks below.
    hold = tmp_path / "hold"
    hold.touch()
    run = f"{sys.executable} {TRAIN} {TRAIN_ARGS} --hold-while {hold}"
    try:
        [job] = service.launch(store, write_spec(tmp_path, run=run), launcher=launcher,
                               wait_seconds=20, checkpoint_root=str(tmp_path / "checkpoints"))
        assert zone_of(store, job.id) == "us-east-1a"
        counter = LiveCounter(launcher, job.id)
        counter.start()
        # Bad offerings: one line each, nothing started.
        for bad, says in (("us-east-1b", "expected 'CLOUD ZONE-OR-REGION"),
                          ("aws us-west-2a p3.2xlarge spot", "no price known"),
                          ("aws us-east-1 p3.2xlarge on-demand", "constraints exclude it")):
            with pytest.raises(InvalidInput, match=says):
                service.migrate(store, launcher, job.id, to=bad)
        assert [m.kind for m in store.moves.of_job(job.id)] == ["launch"]
        # A dearer zone, asked for: it moves, and the reason says by how much it is dearer.
        [dry] = service.migrate(store, launcher, job.id, to="aws us-east-1b p3.2xlarge spot",
                                dry_run=True)
        assert dry.decision.moves and dry.started is None
        assert dry.move_usd > dry.stay_usd
        # The line subtracts its two amounts as written (a cent either way of the exact
        # difference, by the clock the test runs at).
        stay, there = (re.search(rf"\$([\d,.]+) {w}", dry.reason).group(1).replace(",", "")
                       for w in ("to finish here", "there"))
        apart = Decimal(there) - Decimal(stay)
        assert f"(${apart:,} dearer)" in dry.reason, dry.reason
        assert abs(float(apart) - (dry.move_usd - dry.stay_usd)) < 0.011
        # The policy itself would never make that move.
        [own] = service.migrate(store, launcher, job.id, dry_run=True, force=True)
        assert not own.decision.moves
        [moved] = service.migrate(store, launcher, job.id, to="aws:us-east-1b:p3.2xlarge:spot")
        assert moved.started is not None
        # A move the user names goes there or nowhere: no other fallback than staying.
        assert [c["key"][2] for c in moved.started.candidates] == ["us-east-1b", "us-east-1a"]
        service.settle(store, launcher, SETTLE)
        assert zone_of(store, job.id) == "us-east-1b"
        assert store.moves.of_job(job.id)[-1].state == "done"
        counter.stopped = True
        assert counter.most <= 2
    finally:
        for instance in launcher.instances():
            launcher.terminate(instance.id)
        store.dispose()


def test_why_a_move_does_not_pay_is_said_in_dollars() -> None:
    from costsched.service.decide import pays, period_cost

    view = view_from_prices(pd.DataFrame([row("us-west-2a", 1.0), row("us-east-1b", 0.9)]),
                            AT, TABLE, JOB.model)
    state = JobState(JOB, "us-west-2", JOB.steps / 2, key("us-west-2a"))
    day = period_cost(view, state, 100.0)
    assert 0 < day <= 100.0
    assert pays(view, state, 100.0, 90.0, 0.05) == ""
    assert pays(view, state, 100.0, 100.0049, 0.0) == (
        "it would cost $0.0049 more than staying")
    held = pays(view, state, 100.0, 100.0 - 0.5 * 0.05 * day, 0.05)
    assert held.startswith(f"it would save ${0.5 * 0.05 * day:,.2f}, not more than the margin")
    assert pays(view, state, float("nan"), 1.0, 0.05) == (
        "no price is known now for the offering it runs on")


def test_migrate_to_a_misspelled_offering_is_one_line(cli) -> None:  # noqa: ANN001
    result = cli("migrate", "1", "--to", "us-west-2b p3.2xlarge")
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output
    assert "offering 'us-west-2b p3.2xlarge': expected 'CLOUD ZONE-OR-REGION" in lines[0]
