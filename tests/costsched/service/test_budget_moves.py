"""At a budget's cap, where the config says move: the job goes to the cheapest offering that
still finishes it within what is left (local launcher, real subprocesses, a real SQLite
store), and is stopped as before when none does."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched import own_budget
from costsched.config import BudgetsConfig
from costsched.optimize.decision import Overheads
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.cleanup import stop_unless_ended
from tests.costsched.service.test_budget_caps import (
    USD_PER_HOUR,
    _cost,
    _launch,
    _project,
    local,
)
from tests.costsched.service.test_jobs import wait_for
from tests.real_jobs import SETTLE

__all__ = ["local"]  # the fixture, shared with the cap tests

# A move priced by its egress and the old instance's time while the job checkpoints (6 s
# here: at $36/h, 6 cents); no restart or lost work, so that the tiny job's cents decide.
MOVE_OVERHEADS = Overheads(restart_minutes=0, warmup_minutes=0, overlap_minutes=0.1,
                           lost_work_minutes=0)
# Charged ahead at each watch (the check itself runs every second): the next 10 s.
AHEAD = 10.0
MOVE = BudgetsConfig.model_validate({"at_cap": "move"})


def _offer(store: PriceStore, zone: str, usd_per_hour: float) -> None:
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone=zone, instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=usd_per_hour, effective_at=datetime.now(timezone.utc), source="test")]))


def _watch(store: PriceStore, launcher: LocalLauncher, job_id: int, budgets: BudgetsConfig,
           events: list) -> None:
    def watched() -> bool:
        events.extend(service.reconcile(store, launcher, budgets=budgets,
                                        watch_seconds=AHEAD, overheads=MOVE_OVERHEADS))
        return store.jobs.get(job_id).final
    try:
        wait_for(watched, seconds=SETTLE, poll=1.0)
    finally:
        stop_unless_ended(store, launcher, job_id)


def _zones(store: PriceStore, job_id: int) -> list[str]:
    return list(store.jobs.placements(job_id)["zone"])


def test_at_its_cap_a_job_moves_to_an_offering_that_finishes_it_within_the_budget(
        tmp_path: Path, local, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Launched on us-east-1a ($36/h, the only price then); zone b is priced at a hundredth
    of it after the launch. At the cap (what it spent and the next 10 s would pass it: at
    about 5.5 s of the job's 12 s) the job moves to b instead of stopping, the move's price
    within what is left, and runs to its end there within its budget plus one watch
    interval."""
    store, launcher = local
    budget = 0.155
    job_id = _launch(store, launcher, tmp_path,
                     _project(tmp_path, "mover", {"budget": budget}, steps=1200),
                     monkeypatch)
    assert _zones(store, job_id) == ["us-east-1a"]
    _offer(store, "us-east-1b", USD_PER_HOUR / 100)
    # Each check charges the whole interval ahead, not the job's rest (which its budget
    # holds: it would end on a): the cap comes, and moves it.
    monkeypatch.setattr(own_budget, "REST_MARGIN_SECONDS", math.inf)
    events: list = []
    _watch(store, launcher, job_id, MOVE, events)

    assert store.jobs.get(job_id).state == "succeeded"
    assert _zones(store, job_id)[0] == "us-east-1a" and _zones(store, job_id)[-1] == "us-east-1b"
    assert _cost(store, job_id) <= budget + USD_PER_HOUR * AHEAD / 3600
    said = store.jobs.events(job_id)
    said = said[said["kind"] == "budget"]["detail"]
    [moved] = said[said.str.startswith("moved at ")]
    assert moved.startswith("moved at its own budget: $")
    assert "move to aws us-east-1b p3.2xlarge spot: $" in moved
    assert not said.str.startswith("stopped at ").any()
    # Notified once; the line its move's end makes (in a later pass) says why too.
    assert [e.notify for e in events if str(e).startswith(f"job {job_id}: moved at its own "
                                                          "budget")] == ["budget"]
    assert [e.notify for e in events if "-> done: moved at its own budget" in str(e)] in (
        [], [""])


def test_at_its_cap_a_job_that_fits_nowhere_cheaper_is_stopped(
        tmp_path: Path, local, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Zone b is dearer: no move finishes the job within what is left, so it stops."""
    store, launcher = local
    job_id = _launch(store, launcher, tmp_path,
                     _project(tmp_path, "stays", {"budget": 0.08, "at_cap": "move"}),
                     monkeypatch)
    _offer(store, "us-east-1b", USD_PER_HOUR * 2)
    _watch(store, launcher, job_id, BudgetsConfig(), [])  # the job's own field says move

    assert store.jobs.get(job_id).state == "stopped"
    assert set(_zones(store, job_id)) == {"us-east-1a"}
    said = store.jobs.events(job_id)
    said = said[said["kind"] == "budget"]["detail"]
    assert said.str.startswith("stopped at its own budget").sum() == 1
    assert not said.str.startswith("moved at ").any()


def test_status_report_and_the_api_show_each_budget(tmp_path: Path, cli, db_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A job placed for 4 hours at a stored $1/h, its own budget $10 and a team's $3 a
    day: `status --json`, `report --json` and `api.budgets` give each budget's spend,
    commitment, forecast, jobs and stops alike."""
    import json

    from costsched.service import api

    config = tmp_path / "config.toml"
    config.write_text('[budgets.named.team]\nusd = 3\nperiod = "day"\n')
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    store = PriceStore(f"sqlite:///{db_path}")
    key = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
    start = datetime(2026, 3, 1, 22, tzinfo=timezone.utc)
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=1.0, effective_at=start - pd.Timedelta(days=1), source="test")]))
    spec = {"name": "a", "run": "true", "steps": 100, "throughputs": {"V100": 1.0},
            "constraints": {"budget": 10, "budget_name": "team"}}
    job = store.jobs.create("a", {"spec": spec}, 100, at=start)
    store.jobs.place(job, key, gpu_model="V100", gpu_count=1, at=start, usd_per_hour=1.0,
                     reason="launch")
    store.jobs.end_placement(job, start + pd.Timedelta(hours=4))
    store.jobs.transition(job, "stopped", at=start + pd.Timedelta(hours=4),
                          detail="stopped at budget team: test")  # as a stop at a cap is
    store.jobs.note(job, "budget", "stopped at budget team: test", at=start)
    store.dispose()

    shown = cli("status", "--json", "--no-reconcile")
    assert shown.exit_code == 0, shown.output
    status = {b["name"]: b for b in json.loads(shown.output)["budgets"]}
    reported = cli("report", "--json")
    assert reported.exit_code == 0, reported.output
    report = {b["name"]: b for b in json.loads(reported.output)["budgets_now"]}
    frame = api.budgets(db=str(db_path)).set_index("name")

    own = status[f"job {job} (a)"]
    assert (own["kind"], own["period"], own["usd"]) == ("job", "total", 10.0)
    assert own["spent_usd"] == pytest.approx(4.0) and own["left_usd"] == pytest.approx(6.0)
    assert own["committed_usd"] == 0 and own["forecast_usd"] == pytest.approx(4.0)
    assert (own["jobs"], own["running"], own["stopped"]) == ([job], [], [])
    team = status["team"]
    assert (team["kind"], team["period"], team["usd"], team["stopped"]) == (
        "named", "day", 3.0, [job])
    for name, budget in status.items():
        assert report[name] == budget
        assert frame.loc[name, "spent_usd"] == pytest.approx(budget["spent_usd"])
        assert list(frame.loc[name, "stopped"]) == budget["stopped"]


def test_a_cap_reached_in_a_pass_given_no_restart_model_prices_the_move_as_configured(
        tmp_path: Path, local, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """`status` and `migrate` reconcile without a restart model of their own: the cap's
    move is then priced with the configured one (no boot, no warm-up, no lost work here),
    the one `migrate --dry-run` prices the same move with, not a built-in 10 min boot and
    5 min warm-up that no setting says. Both read the move's restart at $0.0000, and the
    job moves rather than stops."""
    store, launcher = local
    budget = 0.155
    job_id = _launch(store, launcher, tmp_path,
                     _project(tmp_path, "configured", {"budget": budget}, steps=1200),
                     monkeypatch)
    (tmp_path / "instant-start.toml").write_text(  # the config `_launch` set, as MOVE's
        "[migration]\nrestart_minutes = 0\nwarmup_minutes = 0\noverlap_minutes = 0.1\n"
        "lost_work_minutes = 0\n")
    _offer(store, "us-east-1b", USD_PER_HOUR / 100)
    # (As the dashboard asks it: no restart model given.)
    [dry] = service.migrate(store, launcher, job_id, dry_run=True, force=True)
    monkeypatch.setattr(own_budget, "REST_MARGIN_SECONDS", math.inf)

    def watched() -> bool:
        service.reconcile(store, launcher, budgets=MOVE, watch_seconds=AHEAD)
        return store.jobs.get(job_id).final
    try:
        wait_for(watched, seconds=SETTLE, poll=1.0)
    finally:
        stop_unless_ended(store, launcher, job_id)

    said = store.jobs.events(job_id)
    said = said[said["kind"] == "budget"]["detail"]
    assert not said.str.startswith("stopped at ").any(), list(said)
    [moved] = said[said.str.startswith("moved at ")]
    assert "move to aws us-east-1b p3.2xlarge spot: $" in moved
    assert _restart_usd(moved) == _restart_usd(dry.reason) == 0.0, (moved, dry.reason)
    assert store.jobs.get(job_id).state == "succeeded"
    assert _zones(store, job_id)[-1] == "us-east-1b"


def _restart_usd(reason: str) -> float:
    """The restart item of a move's itemised price ('... (egress $a, restart $b, ...')."""
    return float(reason.split("restart $", 1)[1].split(",", 1)[0])
