"""A move's price is one figure: `plan --explain` shows it, `migrate --dry-run` shows it and
the decider compares it, itemised the same way (egress, restart, lost work, overlap)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.jobspec import parse, resolve
from costsched.migration.launcher import Instance
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads
from costsched.service import jobs as service
from costsched.service.jobs.decider import JobNow, decider_for, itemised, label, market_at
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable
from tests.costsched.service.test_jobs import offer
from tests.costsched.service.test_status_scale import Instances

NOW = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
EAST = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
# Restart, lost work and overlap all non-zero, so that every item is compared.
OVERHEADS = Overheads(overlap_minutes=3.0)
SPEC = {"name": "big", "run": "python train.py", "steps": 4000,
        "throughputs": {"V100": 0.01},
        "constraints": {"regions": ["us-east-1", "us-west-2"], "markets": ["spot"]},
        "checkpoint": {"location": "/tmp/unused", "size_gb": 50.0, "interval_minutes": 30}}


@pytest.fixture()
def running(tmp_path: Path):  # noqa: ANN201
    """A job with 50 GB checkpoints running in us-east-1, where us-west-2 is cheaper."""
    store = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    at = NOW - timedelta(hours=1)
    west = dict(offer("us-west-2a", 1.0, at), region="us-west-2")
    store.ingest(pd.DataFrame([offer("us-east-1a", 3.0, at), west]))
    launcher = Instances()
    start = NOW - timedelta(hours=6)
    job_id = store.jobs.create("big", {"spec": SPEC, "source": "test",
                                       "launcher": launcher.name},
                               4000, at=start, policy="dynamic-aware")
    store.jobs.transition(job_id, "running", at=start)
    store.jobs.place(job_id, EAST, gpu_model="V100", gpu_count=1, at=start, usd_per_hour=3.0,
                     reason="launch", instance=f"m-{job_id}")
    launcher.states[f"m-{job_id}"] = Instance(f"m-{job_id}", job_id, "a0", EAST, "running")
    yield store, launcher, job_id
    store.dispose()


def test_plan_explain_migrate_dry_run_and_the_decider_price_a_move_alike(
        running: tuple[PriceStore, Instances, int], cli, tmp_path: Path,  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch, cloud_launcher: str) -> None:
    # (the job runs on a launcher that boots instances: `plan` is asked for a cloud's too,
    # where a move's restart is the instance's boot; the local one boots none)
    store, launcher, job_id = running
    [advice] = service.migrate(store, launcher, job_id, dry_run=True, at=NOW,
                               overheads=OVERHEADS)
    shown = advice.decision
    assert shown.moves and shown.move is not None
    assert shown.choice[1] == "us-west-2"
    items = shown.move.as_dict()
    assert all(items[k] > 0 for k in ("egress_usd", "restart_usd", "lost_work_usd",
                                       "overlap_usd"))
    assert itemised(shown) in advice.reason

    # The decider, asked directly for the same job in the same market.
    resolved = resolve(parse(SPEC, "big.yaml"), ThroughputTable(), NOW)
    job = JobNow(resolved, NOW, "dynamic-aware", "us-east-1", EAST, 4000)
    decided = decider_for("dynamic-aware", overheads=OVERHEADS).decide(
        job, market_at(store, NOW), NOW)
    assert decided.choice == shown.choice
    assert decided.move.as_dict() == pytest.approx(items)

    # plan --explain of the choice, from where the job runs.
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    config = tmp_path / "config.toml"
    config.write_text("[migration]\noverlap_minutes = 3.0\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    out = cli("plan", path, "--at", NOW.isoformat(), "--db", store.url,
              "--explain", label(shown.choice), "--from", label(EAST), "--json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["move"] == pytest.approx(items)
    move_line = next(line for line in doc["explain"] if line.startswith("a move here"))
    assert f"${items['total_usd']:.2f}" in move_line
    assert f"egress ${items['egress_usd']:.2f}" in move_line


def test_plan_explain_prices_a_move_from_the_plans_choice_by_default(
        running: tuple[PriceStore, Instances, int], tmp_path: Path) -> None:
    from costsched.service import plan

    store, _, _ = running
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    result = plan(store, path, at=NOW)
    best = str(result.jobs[0].choices["offering"].iloc[0])
    other = next(o for o in result.jobs[0].ranked["offering"] if o != best)
    assert result.move_here(best) is None
    assert any(line == f"a move here: none, it is the plan's choice ({best})"
               for line in result.explain(best))
    assert any(line == f"a move here: none, the job runs here ({best})"
               for line in result.explain(best, moved_from=best))
    there = result.move_here(other)
    assert there is not None and there.as_dict() == pytest.approx(
        result.move_here(other, best).as_dict())
    with pytest.raises(InvalidInput, match="not in big's ranking"):
        result.move_here(other, "aws nowhere-1a p3.2xlarge spot")


def test_the_report_shows_a_move_s_price_as_it_was_decided(
        running: tuple[PriceStore, Instances, int]) -> None:
    from costsched.report import build

    store, launcher, job_id = running
    stops: list[str] = []
    launcher.request_stop = stops.append  # the move starts: its source is asked to stop
    [advice] = service.migrate(store, launcher, job_id, at=NOW, overheads=OVERHEADS)
    assert stops == [f"m-{job_id}"]
    assert advice.started is not None
    items = advice.decision.move.as_dict()
    [row] = build(store, until=NOW + timedelta(hours=1)).moves.to_dict("records")
    assert row["move_id"] == advice.started.id
    assert {k: row[f"priced_{k}"] for k in items} == pytest.approx(items)
