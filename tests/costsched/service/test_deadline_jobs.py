"""Jobs with a deadline, run by the local launcher: the deadline policy places them at
launch, on recovery and when re-planned (spot in a zone that has it, or on-demand)."""

from __future__ import annotations

import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.jobspec import parse, resolve
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service import plan as service_plan
from costsched.service.deadline_jobs import decide_deadline
from costsched.store import PriceStore
from costsched.store.spot_availability import COLUMNS as SPOT_COLUMNS
from costsched.throughput import ThroughputTable
from tests.costsched.service.test_jobs import TRAIN, set_prices, wait_for, world, zone_of
from tests.real_jobs import SETTLE

__all__ = ["world"]  # the fixture, shared with the jobs tests

# 1500 steps at 0.01 steps/s: 41.7 hours of work in the model's eyes (seconds in reality).
STEPS = 1500
WORK_HOURS = STEPS / 0.01 / 3600


def deadline_spec(tmp_path: Path, name: str, deadline_hours: float,
                  markets: tuple[str, ...] = ("spot", "on_demand")) -> Path:
    spec = {
        "name": name,
        "throughputs": {"V100": 0.01},
        "steps": STEPS,
        "run": f"{sys.executable} {TRAIN} --steps {STEPS} --step-seconds 0.02 "
               "--checkpoint-every 0.1",
        "constraints": {"regions": ["us-east-1"], "markets": list(markets),
                        "gpu_models": ["V100"], "deadline": f"{deadline_hours}h"},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def record_capacity_error(store, zone: str) -> None:  # noqa: ANN001
    from costsched.model import Offering

    store.availability.record(Offering("aws", "us-east-1", zone, "p3.2xlarge", "spot",
                                       "V100", 1, 8, 61.0), "capacity",
                              at=datetime.now(timezone.utc), detail="test")


def preempt_and_recover(store, launcher, job_id: int) -> None:  # noqa: ANN001
    instance = str(store.jobs.placements(job_id)["instance"].iloc[-1])
    launcher.preempt(instance)
    wait_for(lambda: launcher.status(instance).state == "preempted")
    lines = service.reconcile(store, launcher)
    assert any("preempted; recovery" in line for line in lines), lines
    service.settle(store, launcher, SETTLE)


def market_of(store, job_id: int) -> str:  # noqa: ANN001
    placements = store.jobs.placements(job_id)
    return str(placements[placements["end_at"].isna()]["market"].iloc[-1])


def test_spot_while_safe_another_zone_after_a_preemption_on_demand_when_late(world) -> None:
    store, launcher, tmp = world
    [job] = service.launch(store, deadline_spec(tmp, "due", WORK_HOURS + 10), launcher=launcher,
                           wait_seconds=SETTLE, checkpoint_root=str(tmp / "checkpoints"),
                           deadline_policy="spot-anywhere")
    assert job.policy == "spot-anywhere"
    assert (zone_of(store, job.id), market_of(store, job.id)) == ("us-east-1a", "spot")

    # Preempted while zone b has no capacity: spot where it was is gone, zone c has it:
    # the job moves there instead of falling back to on-demand.
    record_capacity_error(store, "us-east-1b")
    preempt_and_recover(store, launcher, job.id)
    assert (zone_of(store, job.id), market_of(store, job.id)) == ("us-east-1c", "spot")

    # Preempted again, with no spot anywhere now: on-demand, on time.
    preempt_and_recover(store, launcher, job.id)
    assert market_of(store, job.id) == "on_demand"

    # An hour on, spot is back (no capacity error or preemption for 30 minutes): the job
    # leaves on-demand for the cheapest spot zone, the move paid by the saving.
    later = datetime.now(timezone.utc) + timedelta(hours=1)
    [advice] = service.migrate(store, launcher, job.id, dry_run=True, at=later)
    assert advice.decision.moves, advice.reason
    assert advice.decision.choice[2:5] == ("us-east-1a", "p3.2xlarge", "spot")
    assert advice.reason.startswith("spot-anywhere (deadline ")
    service.stop(store, launcher, job.id)


def test_no_slack_starts_on_demand_and_spot_only_jobs_keep_the_cost_policy(world) -> None:
    from tests.costsched.migration.test_edges import FakeLauncher

    store, launcher, tmp = world
    # On a launcher that boots an instance for each start (a cloud's), a recovery costs
    # its 15 min boot and warm-up: half an hour to spare is too little for spot. (The
    # local launcher boots none: a recovery there costs only the work it loses.)
    booting = FakeLauncher()
    [tight] = service.launch(store, deadline_spec(tmp, "tight", WORK_HOURS + 0.5),
                             launcher=booting, checkpoint_root=str(tmp / "checkpoints"))
    assert market_of(store, tight.id) == "on_demand"
    placed = store.jobs.placements(tight.id).iloc[-1]
    assert placed["usd_per_hour"] == 3.06  # the catalog's list price of p3.2xlarge there
    service.stop(store, booting, tight.id)

    # A deadline that even on-demand cannot meet is refused in one line, as `plan` refuses
    # it (no start counted: the local launcher boots no instance); nothing starts.
    before = len(store.jobs.list())
    late = deadline_spec(tmp, "late", 41.0)
    spec = yaml.safe_load(late.read_text())
    spec["constraints"]["gpu_counts"] = [1]  # (4 V100 would meet it)
    late.write_text(yaml.safe_dump(spec))
    said = (r"job late cannot meet its deadline of 41 h on any allowed offering: the fastest, "
            r"aws us-east-1 p3\.2xlarge on-demand, needs 41\.67 h; it would meet a "
            r"deadline at least 41\.67 h from now "
            r"\(constraints\.deadline in \S+\), or this one with (4 GPUs|\S+) allowed by "
            r"constraints\.gpu_\w+ in \S+ \(aws us-east-1 \S+ on-demand needs \d+\.\d\d(\*)? h"
            r"(?(1) \(\* from an estimated speed on [^)]*\))\)")  # (marked where estimated)
    with pytest.raises(InvalidInput, match=said):
        service.launch(store, late, launcher=launcher,
                       checkpoint_root=str(tmp / "checkpoints"))
    plan = service_plan(store, [late])
    assert re.fullmatch(said, plan.jobs[0].reason)
    assert len(store.jobs.list()) == before and launcher.instances() == []

    [spot_only] = service.launch(store, deadline_spec(tmp, "spot-only", WORK_HOURS + 10,
                                                      markets=("spot",)),
                                 launcher=launcher, wait_seconds=SETTLE,
                                 checkpoint_root=str(tmp / "checkpoints"))
    assert spot_only.policy == "dynamic-aware"
    assert market_of(store, spot_only.id) == "spot"
    service.stop(store, launcher, spot_only.id)


def spells(zone: str, up_minutes: float, down_minutes: float, cycles: int,
           now: pd.Timestamp) -> pd.DataFrame:
    """`cycles` spells of spot in `zone` that ended, then one running since an hour ago."""
    rows, t = [], now - pd.Timedelta(hours=1) - cycles * pd.Timedelta(
        minutes=up_minutes + down_minutes)
    for _ in range(cycles):
        for minutes, available in ((up_minutes, True), (down_minutes, False)):
            rows.append((t, t + pd.Timedelta(minutes=minutes), available))
            t += pd.Timedelta(minutes=minutes)
    rows.append((t, now + pd.Timedelta(hours=1), True))
    return pd.DataFrame([dict(cloud="aws", region="us-east-1", zone=zone,
                              instance_type="p3.2xlarge", gpu_model="V100", gpu_count=1,
                              start=s, end=e, available=a, kind="availability",
                              source=f"{zone}.json") for s, e, a in rows],
                        columns=SPOT_COLUMNS)


def test_the_live_decision_weighs_how_long_each_zone_s_spot_held(tmp_path: Path) -> None:
    """Zone a is a little cheaper but its spot came in 10-minute spells, b's in 6-hour
    ones: with that history stored, a job with slack starts in b; without, in a."""
    now = pd.Timestamp("2023-03-01 12:00", tz="UTC")
    spec = resolve(parse(yaml.safe_load(deadline_spec(tmp_path, "slack", 60).read_text())),
                   ThroughputTable.load(), now.to_pydatetime())

    def choice(with_history: bool) -> str:
        store = PriceStore(str(tmp_path / f"{with_history}.sqlite"))
        set_prices(store, {"us-east-1a": 0.90, "us-east-1b": 0.92},
                   (now - pd.Timedelta(hours=2)).to_pydatetime())
        frames = [spells("us-east-1a", 10, 20, 10, now), spells("us-east-1b", 360, 60, 3, now)]
        if not with_history:  # only the spells running now
            frames = [f.tail(1) for f in frames]
        store.spot_availability.add(pd.concat(frames, ignore_index=True))
        decision = decide_deadline(store, spec, created_at=now.to_pydatetime(),
                                   at=now.to_pydatetime(), steps_left=STEPS, current=None)
        store.dispose()
        return f"{decision.choice[2]} {decision.choice[4]}"

    assert choice(with_history=False) == "us-east-1a spot"
    assert choice(with_history=True) == "us-east-1b spot"


def test_the_live_market_knows_the_past_as_the_replay_computes_it(tmp_path: Path) -> None:
    """Zone a: 10 min of spot in every 30 (3 cycles, then spot for the last hour); zone b:
    1 h of spot, 1 h without (once, then spot since an hour ago); zone c never observed.
    From the first observation (3 h ago, in b) to now, spot was somewhere except where both
    were without; the spells seen to end are a's three of 10 minutes and b's one hour; c
    keeps the policy's prior."""
    from costsched.policies.deadline.base import MarketPrior, spell_mean, spot_share
    from costsched.service.deadline_jobs import _market_past

    now = pd.Timestamp("2023-03-01 12:00", tz="UTC")
    store = PriceStore(str(tmp_path / "share.sqlite"))
    # a: spells at -2:30..-2:20, -2:00..-1:50, -1:30..-1:20, then -1:00 on;
    # b: -3:00..-2:00 up, -2:00..-1:00 down, then -1:00 on.
    store.spot_availability.add(pd.concat([spells("us-east-1a", 10, 20, 3, now),
                                           spells("us-east-1b", 60, 60, 1, now)],
                                          ignore_index=True))
    zones = pd.DataFrame({"cloud": ["aws"] * 3,
                          "zone": ["us-east-1a", "us-east-1b", "us-east-1c"]})
    prior = MarketPrior(0.8, 7200.0, 1800.0, 3600.0)
    past = _market_past(store, zones, "p3.2xlarge", now.to_pydatetime(), prior)
    assert _market_past(store, zones, "p3.2xlarge", (now - pd.Timedelta(hours=4))
                        .to_pydatetime(), prior) == {}  # nothing observed yet: the prior
    store.dispose()
    # Seen from -3:00 (b's first) to now: 180 min. Spot somewhere: -3:00..-2:00 (b),
    # -2:00..-1:50 and -1:30..-1:20 (a), -1:00..now: 60 + 10 + 10 + 60 = 140 min.
    assert past["spot_share"] == pytest.approx(spot_share(140 * 60.0, 180 * 60.0, prior))
    assert past["spell_mean"][0].tolist() == pytest.approx(
        [spell_mean(3 * 600.0, 3, prior.spell), spell_mean(3600.0, 1, prior.spell),
         prior.spell])
    assert past["dry_for"][0].tolist() == [0.0, 0.0, 0.0]  # spot now in a and b
    assert past["zone_share"][0, 2] == prior.share and past["dry_mean"][0, 2] == prior.dry
