"""The one decider and the account's quotas: a launch (by either policy), a recovery and a
move never choose an offering the quota does not hold while one it holds exists; a gang
needs N times an instance's share; a refusal recorded during a pass is known to the next
decision of that pass; quotas not known change nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.jobspec import parse, resolve
from costsched.passes import one_pass
from costsched.service.jobs.decider import JobNow, decider_for, market_at, place
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable
from launchers.local import LocalLauncher
from tests.costsched.service.test_deadline_jobs import WORK_HOURS, deadline_spec
from tests.costsched.service.test_jobs import offer, write_spec

NOW = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
REGIONS = ["us-east-1", "us-west-2"]


@pytest.fixture()
def store(tmp_path: Path):  # noqa: ANN201
    opened = PriceStore(str(tmp_path / "store.sqlite"))
    at = NOW - timedelta(hours=1)
    rows = [offer(z, p, at) for z, p in {"us-east-1a": 1.0, "us-east-1b": 1.5}.items()]
    rows.append({**offer("us-west-2a", 2.0, at), "region": "us-west-2"})
    opened.ingest(pd.DataFrame(rows))
    yield opened
    opened.dispose()


def p_spot(store: PriceStore, used: dict[str, float] | None = None, **limits: float) -> None:
    """The spot P quota, as read now, in each region named (region_with_dashes=limit), and
    its use (region: vCPUs)."""
    reading = pd.DataFrame([{"scope": r.replace("_", "-"), "code": "L-7212CCBC",
                             "name": "All P Spot Instance Requests", "unit": "vCPUs",
                             "limit": v, "used": (used or {}).get(r.replace("_", "-"), 0.0),
                             "source": "test"}
                            for r, v in limits.items()])
    store.quotas.record("aws", reading, at=NOW - timedelta(minutes=5))


def key(zone: str) -> tuple:
    return ("aws", zone[:-1], zone, "p3.2xlarge", "spot", "linux")


def job(tmp_path: Path, kind: str = "price", nodes: int = 1):  # noqa: ANN201
    path = (write_spec(tmp_path) if kind == "price" else
            deadline_spec(tmp_path, "due", WORK_HOURS + 10))
    spec = yaml.safe_load(path.read_text())
    spec["constraints"]["regions"] = REGIONS
    if nodes > 1:
        spec["num_nodes"] = nodes
    return resolve(parse(spec, str(path)), ThroughputTable(), NOW)


@pytest.mark.parametrize("kind", ["price", "deadline"])
def test_a_launch_and_a_recovery_go_where_the_quota_holds(store: PriceStore, tmp_path: Path,
                                                         kind: str) -> None:
    resolved = job(tmp_path, kind)
    policy = "dynamic-aware" if kind == "price" else "spot-anywhere"
    first = decider_for(policy).decide(JobNow(resolved, NOW, policy, "us-east-1", None,
                                              resolved.job.steps, first=True),
                                       market_at(store, NOW), NOW)
    assert first.choice == key("us-east-1a")  # not known: ranked as if it fit
    p_spot(store, us_east_1=0, us_west_2=96)
    for lost in (frozenset(), frozenset({key("us-east-1b")})):
        now = JobNow(resolved, NOW, policy, "us-east-1", None, resolved.job.steps, lost=lost,
                     first=not lost)
        decided = decider_for(policy).decide(now, market_at(store, NOW), NOW)
        assert decided.choice == key("us-west-2a"), decided.reason
        if kind == "price":  # the quota's price: us-west-2 at $2.00/h against $1.00/h
            assert decided.reason.startswith(
                "placed on aws us-west-2a p3.2xlarge spot, the least expected cost the "
                "account's quotas hold; quota cost: $"), decided.reason
            assert ("more (+$1.0000/h) on aws us-west-2a p3.2xlarge spot than on aws "
                    "us-east-1a p3.2xlarge spot, which the quota does "
                    "not hold (quota 0 of 8 vCPUs: request L-7212CCBC in us-east-1)"
                    ) in decided.reason
        tried = [tuple(c["key"]) for c in place(store, now, LocalLauncher(tmp_path), NOW)]
        assert tried[0] == key("us-west-2a")
        # Over quota (us-east-1 spot): after every offering that is not.
        over = [k[1] == "us-east-1" and k[4] == "spot" for k in tried]
        assert over == sorted(over), tried


def test_a_move_never_goes_where_the_quota_does_not_hold(store: PriceStore,
                                                         tmp_path: Path) -> None:
    resolved = job(tmp_path)
    running = JobNow(resolved, NOW, "dynamic-aware", "us-east-1", key("us-west-2a"),
                     resolved.job.steps)
    free = decider_for("dynamic-aware").decide(running, market_at(store, NOW), NOW)
    assert free.moves and free.choice[1] == "us-east-1"  # cheaper, and not known to be full
    # The job's own 8 vCPUs fill us-west-2: it stays there all the same.
    p_spot(store, {"us-west-2": 8.0}, us_east_1=0, us_west_2=8)
    held = decider_for("dynamic-aware").decide(running, market_at(store, NOW), NOW)
    assert not held.moves and held.choice == key("us-west-2a")
    assert all(o.region != "us-east-1" for o, _ in held.alternatives)


def test_a_gang_needs_its_nodes_share(store: PriceStore, tmp_path: Path) -> None:
    p_spot(store, us_east_1=8, us_west_2=16)
    one = job(tmp_path)
    gang = job(tmp_path, nodes=2)
    decide = decider_for("dynamic-aware").decide
    assert decide(JobNow(one, NOW, "dynamic-aware", "", None, one.job.steps, first=True),
                  market_at(store, NOW), NOW).choice == key("us-east-1a")
    two = decide(JobNow(gang, NOW, "dynamic-aware", "", None, gang.job.steps, first=True),
                 market_at(store, NOW), NOW)
    assert two.choice == key("us-west-2a")  # 2 x 8 vCPUs fit in us-west-2 only
    p_spot(store, us_east_1=8, us_west_2=8)
    none = decide(JobNow(gang, NOW, "dynamic-aware", "", None, gang.job.steps, first=True),
                  market_at(store, NOW), NOW)
    # Nothing fits: the cheapest is tried, and the reason says what to ask for.
    assert none.choice == key("us-east-1a")
    assert none.reason.endswith("no offering is within the account's quotas (quota 8 of 16 "
                                "vCPUs: request L-7212CCBC in us-east-1)")


def test_a_refusal_recorded_in_a_pass_is_known_to_its_next_decision(store: PriceStore,
                                                                     tmp_path: Path) -> None:
    resolved = job(tmp_path)
    now = JobNow(resolved, NOW, "dynamic-aware", "", None, resolved.job.steps, first=True)
    with one_pass():
        before = decider_for("dynamic-aware").decide(now, market_at(store, NOW), NOW)
        store.quotas.refused("aws", "us-east-1", "L-7212CCBC", unit="vCPUs", asked=8.0,
                             at=NOW, detail="MaxSpotInstanceCountExceeded")
        after = decider_for("dynamic-aware").decide(now, market_at(store, NOW), NOW)
    assert before.choice == key("us-east-1a") and after.choice == key("us-west-2a")
