"""Budgets that stop spending (local launcher, real subprocesses, a real SQLite store): a job
whose plan fits its budget but whose run does not is checkpointed and stopped by the
daemon's watcher at its cap, costs no more than its budget (plus what a check that comes
late adds, as docs/budgets.md says), keeps its checkpoints and is started again once its
budget is raised; of two jobs of a team budget that together pass it, the second is
stopped, not the first."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from costsched.config import BudgetsConfig, Config
from costsched.costs import job_cost
from costsched.daemon import Daemon
from costsched.report.data import build
from costsched.service import jobs as service
from costsched.service.jobs import caps, watch
from costsched.service.jobs.decider import budget_verdict
from costsched.store import PriceStore
from launchers.checkpoints import open_store
from launchers.local import LocalLauncher
from tests.cleanup import stop_unless_ended
from tests.costsched.service.test_jobs import wait_for
from tests.job_folders import folder_of
from tests.real_jobs import SETTLE

PROJECT = Path(__file__).resolve().parents[3] / "examples" / "tinyproject"
AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
USD_PER_HOUR = 36.0  # one cent a second: a few seconds of the tiny job are dollars' cents
WATCH = 1.0
RUN = "python train.py --steps 4000 --step-seconds 0.01 --checkpoint-every 0.2"


def _project(tmp_path: Path, name: str, constraints: dict, steps: int = 4000,
             speed: float = 10_000, hold: Path | None = None) -> Path:
    project = tmp_path / name
    if not project.exists():
        shutil.copytree(PROJECT, project,
                        ignore=shutil.ignore_patterns("checkpoints", "__pycache__"))
    spec = yaml.safe_load((project / "costsched.yaml").read_text())
    # 10,000 steps/s declared is 100x faster than it runs (100 steps/s): the plan fits
    # the budget, the run does not.
    run = RUN.replace("4000", str(steps)) + (f" --hold-while {hold}" if hold else "")
    spec.update(name=name, run=run, setup="", steps=steps, throughputs={"V100": speed})
    spec["constraints"].update(constraints)
    (project / "job.yaml").write_text(yaml.safe_dump(spec))
    return project


@pytest.fixture
def local(tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch):
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=USD_PER_HOUR, effective_at=AT, source="test")]))
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    launcher = LocalLauncher(tmp_path / "instances", poll_seconds=0.2)
    return store, launcher


def _launch(store: PriceStore, launcher: LocalLauncher, tmp_path: Path, project: Path,
            monkeypatch: pytest.MonkeyPatch) -> int:
    # A local instance starts at once: no boot, no warm-up to price (the plan counts the
    # job's first start; 15 minutes at $36/h would be $9 of these cents' budgets).
    config = tmp_path / "instant-start.toml"
    config.write_text("[migration]\nrestart_minutes = 0\nwarmup_minutes = 0\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    monkeypatch.chdir(project)
    [job] = service.launch(store, ["job.yaml"], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return job.id


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _cost(store: PriceStore, job_id: int) -> float:
    return job_cost(store, job_id, now=_now(), checkpoint_gb=0.01).total_usd


def test_the_watcher_stops_a_job_at_its_budget_and_start_resumes_it_when_raised(
        tmp_path: Path, local, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher = local
    budget = 0.08  # 8 s of the job's 10 s at one cent a second
    steps = 1000
    job_id = _launch(store, launcher, tmp_path,
                     _project(tmp_path, "capped", {"budget": budget}, steps=steps),
                     monkeypatch)
    checks = []  # each budget check of the watcher: its time, clock and what it did

    def checked(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        clock = time.monotonic()
        done = caps.enforce(*args, **kwargs)
        checks.append((args[3], clock, done))
        return done

    monkeypatch.setattr(watch, "enforce", checked)
    config = Config.model_validate({"daemon": {"watch_seconds": WATCH}})
    daemon = Daemon(store, config, tasks=(), launchers=lambda _: launcher)
    daemon.start()
    try:
        wait_for(lambda: store.jobs.get(job_id).state == "stopped", seconds=SETTLE, poll=0.2)
    finally:
        daemon.stop()

    # The bound docs/budgets.md promises, from the check that stopped it and the one
    # before (`late`: how much longer than a watch interval apart they came; a pass that
    # outlasts the interval on a busy machine makes the next one late).
    per_second = USD_PER_HOUR / 3600
    [k] = [i for i, (_, _, done) in enumerate(checks) if any(
        "stopped at its own budget" in e for e in done)]
    at, clock, _ = checks[k]
    start = store.jobs.placements(job_id)["start_at"].iloc[0]
    # The check before the one that stopped it; on a machine so busy that the first check
    # came after the cap was passed, the launch itself (when the job began to spend).
    before, clock_before = (checks[k - 1][0], checks[k - 1][1]) if k > 0 else (
        start.to_pydatetime(), clock - (pd.Timestamp(at) - start).total_seconds())
    late = max((at - before).total_seconds() - WATCH, 0.0)
    spent = _cost(store, job_id)
    assert spent <= budget + per_second * late + 1e-9  # not past its cap but for the lateness
    # Stopped when its spend at that check (the store keeps whole seconds: the placement
    # closes within a second of it) and the charge ahead passed the cap, not before.
    seen = per_second * (pd.Timestamp(at) - start).total_seconds()
    assert seen - per_second <= spent <= seen
    assert seen + per_second * max(WATCH, clock - clock_before) > budget - 1e-6
    record = store.jobs.get(job_id)
    assert record.state == "stopped"
    assert not any(i.live for i in launcher.instances(job_id))
    checkpoints = open_store(str(tmp_path / "ckpt" / folder_of(store, job_id)))
    kept = checkpoints.newest_verified()
    step = int(np.load(checkpoints.fetch(kept, tmp_path / "kept"))["step"])
    assert 0 < step < steps  # the checkpoint asked for at the cap, kept
    events = store.jobs.events(job_id)
    said = events[events["kind"] == "budget"]["detail"]
    stopped = said[said.str.startswith("stopped at ")]
    assert len(stopped) == 1
    assert stopped.iloc[0].startswith("stopped at its own budget: $")
    # (the budget at its line's precision: $0.08 at cents, $0.0800 beside a $0.0012)
    assert re.search(r"would pass the budget of \$0\.08(00)?\b", stopped.iloc[0])
    assert any(re.match(r"its budget reached 50% of \$0\.08(00)? \(total\): \$", d)
               for d in said)

    # The report and the API say why it stopped, and what the budget spent.
    report = build(store, now=_now())
    row = report.budgets.set_index("job_id").loc[job_id]
    assert row["status"] == "stopped at its budget"
    [state] = caps.budget_states(store, BudgetsConfig(), _now(), WATCH)
    assert state.stopped == (job_id,) and state.running == ()
    assert state.spent_usd == pytest.approx(spent, rel=0.01)

    # `status` shows the budget and what it stopped.
    shown = cli("status", str(job_id), "--no-reconcile")
    assert shown.exit_code == 0, shown.output
    budgets = shown.output[shown.output.index("Budgets"):]
    assert f"job {job_id} (capped)" in budgets and "total" in budgets
    # The ids in its last column read as the jobs they are, not as a count.
    assert re.search(rf"│ job {job_id}\s*│$", budgets, re.MULTILINE), budgets

    reported = cli("report")
    assert reported.exit_code == 0, reported.output
    assert "stopped at its budget" in reported.output and "Budgets now" in reported.output

    # Raised (its start, a restart of 15 min at $36/h, is $9 of it), it runs on from its
    # checkpoint to the end, and no budget says it is stopped at its cap any more.
    started = cli("start", str(job_id), "--budget", "10", "--wait", "0")
    assert started.exit_code == 0, started.output
    assert caps.budget_states(store, BudgetsConfig(), _now(), WATCH)[0].usd == 10.0
    shown = "".join(service.follow(store, launcher, job_id, poll=0.2))
    assert store.jobs.get(job_id).state == "succeeded"
    assert f"resumed at step {step}" in shown and f"done at step {steps}" in shown
    assert caps.budget_states(store, BudgetsConfig(), _now(), WATCH)[0].stopped == ()
    assert "stopped at its budget" not in cli("report").output


def test_a_team_budget_stops_the_second_of_two_jobs_not_the_first(
        tmp_path: Path, local, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first job alone fits the team's budget (1,000 steps, 10 s at its pace, declared
    at a tenth of it: $1.00 claimed); with the second they would pass it: the second is
    stopped while the first still needs what it claims, and the first runs to its end. The
    first holds at its first step until the second is stopped, however slow the machine."""
    store, launcher = local
    team = BudgetsConfig.model_validate(
        {"named": {"vision": {"usd": 1.10, "period": "month"}}})
    hold = tmp_path / "hold"
    hold.touch()
    first = _launch(store, launcher, tmp_path,
                    _project(tmp_path, "first", {"budget_name": "vision"}, steps=1000,
                             speed=10, hold=hold), monkeypatch)
    first_checkpoints = open_store(str(tmp_path / "ckpt" / folder_of(store, first)))
    wait_for(lambda: bool(first_checkpoints.list()), seconds=SETTLE, poll=0.1)
    second = _launch(store, launcher, tmp_path,
                     _project(tmp_path, "second", {"budget_name": "vision"}), monkeypatch)
    events: list = []

    def ended(job_id: int) -> Callable[[], bool]:
        def watched() -> bool:
            events.extend(service.reconcile(store, launcher, budgets=team,
                                            watch_seconds=WATCH))
            return store.jobs.get(job_id).final
        return watched

    try:
        wait_for(ended(second), seconds=90, poll=WATCH)
        first_then = store.jobs.get(first).state
        hold.unlink()
        wait_for(ended(first), seconds=90, poll=WATCH)
    finally:
        for job_id in (first, second):
            stop_unless_ended(store, launcher, job_id)
    assert first_then == "running"  # the second was stopped while the first ran
    assert store.jobs.get(first).state == "succeeded"
    assert store.jobs.get(second).state == "stopped"
    [state] = caps.budget_states(store, team, _now(), WATCH)
    assert state.name == "vision" and state.jobs == (first, second)
    assert state.stopped == (second,) and state.running == ()
    assert state.spent_usd <= 1.10 + USD_PER_HOUR * WATCH / 3600
    assert any(e.startswith(f"job {second}: stopped at budget vision: $") and
               "its earlier jobs need to finish" in e for e in events)
    # Each threshold the team passed is notified once (which ones depends on the pace).
    reached = [e.split(" (")[0] for e in events if "budget vision reached" in e]
    assert len(reached) == len(set(reached))
    assert all(e.notify == "budget" for e in events if "budget vision reached" in e)


def test_the_budget_check_stops_when_the_next_interval_would_pass_the_cap() -> None:
    assert budget_verdict("b", 0.5, 0.4, 1.0) is None
    assert budget_verdict("b", 0.5, 0.5, 1.0) is None
    assert budget_verdict("b", 0.61, 0.4, 1.0) == (
        "$0.61 spent + $0.40 for the next watch interval would pass the budget of $1.00")


def test_periods_begin_at_midnight_and_on_the_first_utc() -> None:
    at = datetime(2026, 3, 17, 15, 4, tzinfo=timezone.utc)
    assert caps.period_start("day", at) == datetime(2026, 3, 17, tzinfo=timezone.utc)
    assert caps.period_start("month", at) == datetime(2026, 3, 1, tzinfo=timezone.utc)
    assert caps.period_start("total", at) is None


@pytest.mark.parametrize("value", [[0], [1.5], [-0.1]])
def test_thresholds_are_shares_of_the_budget(value: list[float]) -> None:
    with pytest.raises(ValueError, match="expected shares of the budget"):
        BudgetsConfig.model_validate({"thresholds": value})


def test_a_job_joins_a_named_budget_by_its_field_or_its_labels() -> None:
    team = BudgetsConfig.model_validate(
        {"named": {"vision": {"usd": 10, "labels": {"team": "vision"}}}}).named["vision"]
    assert caps.joins({"spec": {"constraints": {"budget_name": "vision"}}}, "vision", team)
    assert caps.joins({"spec": {"task": {"labels": {"team": "vision", "x": "y"}}}},
                      "vision", team)
    assert not caps.joins({"spec": {"task": {"labels": {"team": "nlp"}}}}, "vision", team)
    assert not caps.joins({"spec": {}}, "vision", team)


def test_budgets_meter_their_period_from_stored_prices(db_path: Path) -> None:
    """A job placed 22:00-02:00 at a stored $1/h: its own budget (total) is charged $4, a
    daily team budget at 03:00 the $2 since midnight; a raised budget replaces the spec's,
    and a job launched without one can be given one."""
    store = PriceStore(f"sqlite:///{db_path}")
    key = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=1.0, effective_at=AT, source="test")]))
    start = datetime(2026, 3, 1, 22, tzinfo=timezone.utc)
    spec = {"name": "a", "constraints": {"budget": 10, "budget_name": "team"}}
    a = store.jobs.create("a", {"spec": spec}, 100, at=start)
    b = store.jobs.create("b", {"spec": {"name": "b"}}, 100, at=start)
    store.jobs.place(a, key, gpu_model="V100", gpu_count=1, at=start, usd_per_hour=9.0,
                     reason="launch")
    store.jobs.end_placement(a, start + pd.Timedelta(hours=4))
    at = start + pd.Timedelta(hours=5)
    team = BudgetsConfig.model_validate({"named": {"team": {"usd": 3, "period": "day"}}})

    own, named = caps.budget_states(store, team, at, 60)
    assert (own.name, own.usd, own.period, own.jobs) == ("job 1 (a)", 10.0, "total", (a,))
    assert own.spent_usd == pytest.approx(4.0)  # the stored price, not the recorded $9
    assert (named.name, named.period, named.jobs) == ("team", "day", (a,))
    assert named.spent_usd == pytest.approx(2.0)  # since midnight UTC
    assert named.committed_usd == 0 and named.forecast_usd == pytest.approx(2.0)

    caps.raise_budget(store, a, 20, at=at)
    caps.raise_budget(store, b, 3, at=at)
    states = {s.name: s.usd for s in caps.budget_states(store, team, at, 60)}
    assert states == {"job 1 (a)": 20.0, "job 2 (b)": 3.0, "team": 3.0}


def test_config_show_lists_the_budgets(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from costsched.cli import app

    path = tmp_path / "config.toml"
    path.write_text('[budgets]\nthresholds = [0.5, 0.9]\n[budgets.named.vision]\nusd = 500\n'
                    'period = "month"\nlabels = { team = "vision" }\n')
    shown = CliRunner().invoke(app, ["config", "show", "--config", str(path)])
    assert shown.exit_code == 0, shown.output
    lines = {line.split("│")[1].strip(): line for line in shown.output.splitlines()
             if line.count("│") > 2}
    assert "0.5, 0.9" in lines["budgets.thresholds"]
    assert ('vision: {usd = 500.0, period = "month", labels = {team = "vision"}}'
            in lines["budgets.named"])  # as the file writes it


def test_a_budget_s_forecast_runs_to_the_end_of_its_period(db_path: Path) -> None:
    """A job running since 22:00 at a stored $1/h, months of work left: at 03:00 its own
    (total) budget forecasts its cost to its end, a daily team budget only to midnight."""
    from costsched.service import api

    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=1.0, effective_at=AT, source="test")]))
    start = datetime(2026, 3, 1, 22, tzinfo=timezone.utc)
    steps = 1_000_000  # at 1 step/s declared: 277.8 hours
    spec = {"name": "r", "run": "true", "steps": steps, "throughputs": {"V100": 1.0},
            "constraints": {"budget": 1000, "budget_name": "team"}}
    job = store.jobs.create("r", {"spec": spec}, steps, at=start)
    store.jobs.place(job, ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux"),
                     gpu_model="V100", gpu_count=1, at=start, usd_per_hour=1.0,
                     reason="launch")
    store.jobs.transition(job, "running", at=start)
    team = BudgetsConfig.model_validate({"named": {"team": {"usd": 30, "period": "day"}}})
    at = start + pd.Timedelta(hours=5)  # 03:00 the next day

    frame = api.budgets(at, db=store, config=team, interval_seconds=3600).set_index("name")
    own, daily = frame.loc[f"job {job} (r)"], frame.loc["team"]
    assert own["spent_usd"] == pytest.approx(5.0) and daily["spent_usd"] == pytest.approx(3.0)
    assert own["committed_usd"] == pytest.approx(1.0) == daily["committed_usd"]
    # No step reported: every step is left (none guessed from the hours it ran), at its
    # declared pace, at $1/h.
    to_end = steps / 3600
    assert own["forecast_usd"] == pytest.approx(5.0 + to_end)
    assert daily["forecast_usd"] == pytest.approx(3.0 + 21.0)  # to midnight
    assert list(daily["running"]) == [job] and list(daily["stopped"]) == []
    assert caps.period_end("month", at) == datetime(2026, 4, 1, tzinfo=timezone.utc)
    store.dispose()
