"""The scheduled optimizer with compressed schedules (IntervalTrigger of seconds instead of
cron), the local launcher running examples/train.py, and a price source that changes: it
collects, re-plans, migrates, records; daemons starting at one instant all start; and
`run_once` runs only what is due. Daemons in processes of their own (stopped mid-migration,
two sharing a store): test_daemon_processes.py."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import text as sql_text

from costsched import daemon as daemon_module
from costsched import service as service_api
from costsched.config import Config
from costsched.daemon import Daemon, run_once
from costsched.daemon import scheduler as daemon_scheduler
from costsched.report import build as build_report
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from price_collectors.runner import CloudSummary, RunSummary
from tests.costsched.service.test_jobs import (
    STEPS,
    TRAIN,
    set_prices,
    wait_for,
    write_spec,
    zone_of,
)
from tests.real_jobs import SETTLE

ROOT = Path(__file__).resolve().parents[2]
CHEAP = {"us-east-1a": 1.0, "us-east-1b": 2.0, "us-east-1c": 2.5}
DEAR_A = {"us-east-1a": 3.0, "us-east-1b": 0.5}  # a move from a to b pays for itself


def fake_collect(prices: dict[str, float], calls: list[str] | None = None):  # noqa: ANN201
    """A collect_prices that 'collects' `prices` now (the clouds' SDKs are the edge)."""

    def collect(store: PriceStore, **kwargs: object) -> RunSummary:
        if calls is not None:
            calls.append(str(kwargs.get("regions")))
        set_prices(store, prices, datetime.now(timezone.utc))
        return RunSummary({"aws": CloudSummary("aws")}, inserted=len(prices))

    return collect


def aligned(offset: float = 0.0) -> datetime:
    """A whole second in the past: the start of interval triggers every daemon shares."""
    return datetime.fromtimestamp(int(time.time()) - 10 + offset, timezone.utc)


@pytest.fixture()
def running_job(tmp_path: Path):  # noqa: ANN201
    """A SQLite store with cheap zone a, and a job training there on the local launcher."""
    store = PriceStore(str(tmp_path / "store.sqlite"))
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5)
    set_prices(store, CHEAP, datetime.now(timezone.utc) - timedelta(hours=1))
    # Slow enough (5 minutes) that it is still running when a loaded machine's daemon
    # process has started and moved it.
    slow = f"{sys.executable} {TRAIN} --steps {STEPS} --step-seconds 0.2 --checkpoint-every 0.1"
    [job] = service.launch(store, write_spec(tmp_path, run=slow), launcher=launcher,
                           wait_seconds=SETTLE, checkpoint_root=str(tmp_path / "checkpoints"))
    assert zone_of(store, job.id) == "us-east-1a"
    yield store, launcher, job.id
    for instance in launcher.instances():
        launcher.terminate(instance.id)
    store.dispose()


def hook(tmp_path: Path) -> tuple[Config, Path]:
    """A config whose notification command appends each event's JSON to a file."""
    out = tmp_path / "events.jsonl"
    code = f"import sys; open({str(out)!r}, 'ab').write(sys.stdin.buffer.read() + b'\\n')"
    return Config.model_validate({"notify": {"command": [sys.executable, "-c", code]}}), out


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_daemon_collects_replans_migrates_and_records(
    running_job, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    store, launcher, job_id = running_job
    monkeypatch.setattr(service_api, "collect_prices", fake_collect(DEAR_A))
    config, hooked = hook(tmp_path)
    caplog.set_level(logging.INFO, logger="costsched.daemon")
    daemon = Daemon(store, config, tasks=("collect", "replan"), launchers=lambda _: launcher,
                    settle_seconds=SETTLE,
                    triggers={"collect": IntervalTrigger(seconds=2, start_date=aligned()),
                              "replan": IntervalTrigger(seconds=2, start_date=aligned(1))})
    daemon.start()
    try:
        moved = wait_for(lambda: [m for m in store.moves.of_job(job_id)
                                  if m.kind == "migration" and m.state == "done"], SETTLE)
    finally:
        daemon.stop()
    assert len(moved) == 1 and zone_of(store, job_id) == "us-east-1b"
    runs = store.task_runs.recent(limit=100)
    assert {r.task for r in runs if r.status == "ok"} == {"collect", "replan"}
    assert any("1 migration started" in r.detail for r in runs if r.task == "replan")
    assert store.leases.held() == []  # given up on stop
    later = datetime.now(timezone.utc) + timedelta(hours=1)  # the new placement has cost
    [status] = service.status(store, launcher, job_id, at=later)
    assert [(m.kind, m.state) for m in status.moves] == [("launch", "done"),
                                                        ("migration", "done")]
    placements = status.cost.placements
    assert list(placements["reason"]) == ["launch", "migration"]
    assert (placements["usd"] > 0).all()
    there = placements.iloc[1]
    assert there["usd"] == pytest.approx(there["hours"] * DEAR_A["us-east-1b"], rel=1e-3)
    assert status.cost.total_usd >= placements["usd"].sum()
    # The report shows the move and what it cost (the source billed while the target
    # started, no egress within the region). Times are stored to the second and a local
    # move can take less than one, so its idle cost may be 0.
    report = build_report(store, now=later)
    [move] = report.moves.to_dict("records")
    assert (move["job_id"], move["kind"], move["state"]) == (job_id, "migration", "done")
    assert "us-east-1a" in move["source"] and "us-east-1b" in move["target"]
    assert move["idle_usd"] >= 0 and move["egress_usd"] == 0
    assert move["usd"] == pytest.approx(move["idle_usd"] + move["egress_usd"])
    assert report.jobs["usd"].sum() == pytest.approx(status.cost.total_usd, rel=1e-6)
    lines = [r.getMessage() for r in caplog.records if "event=migrated" in r.getMessage()]
    assert len(lines) == 1 and f"job={job_id}" in lines[0]
    assert "from=aws:us-east-1a:p3.2xlarge:spot to=aws:us-east-1b:p3.2xlarge:spot" in lines[0]
    assert float(lines[0].split("usd_saved=")[1].split()[0]) > 0
    [migration] = [e for e in events(hooked) if e["event"] == "migration"]
    assert migration["job"] == job_id and migration["to"].startswith("aws:us-east-1b")
    # The schedule is in the store's database, for `costsched status`.
    jobs = pd.read_sql("SELECT id, next_run_time FROM apscheduler_jobs", store.engine)
    assert sorted(jobs["id"]) == ["collect", "replan"]
    shown = {t.task: t for t in daemon_module.status(store)}
    assert shown["collect"].next_run is not None and shown["catalog"].next_run is None
    assert shown["replan"].last is not None and shown["replan"].last.status == "ok"


START_AT_ONCE = """
import sys, time
from pathlib import Path
import apscheduler.jobstores.sqlalchemy, apscheduler.schedulers.background  # loaded before
from costsched.config import Config
from costsched.daemon import Daemon
from costsched.store import PriceStore

url, ready, go = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
store = PriceStore(url)
ready.touch()
while not go.exists():  # the instant every process starts at, once all opened the store
    time.sleep(0.005)
time.sleep(max(0.0, float(go.read_text()) - time.time()))
daemon = Daemon(store, Config(), tasks=["collect"], watch_seconds=0)
daemon.start()
daemon.stop()
print("started and stopped")
"""


def test_daemons_starting_at_the_same_instant_on_a_new_store_all_start(
    empty_url: str, tmp_path: Path
) -> None:
    """Their schedule's table is made with the store, not by the first scheduler to start:
    on PostgreSQL, schedulers creating it at once fail on the catalog's unique index."""
    script = tmp_path / "start_at_once.py"
    script.write_text(textwrap.dedent(START_AT_ONCE))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ready = [tmp_path / f"ready-{i}" for i in range(3)]
    go = tmp_path / "go"
    runs = [subprocess.Popen([sys.executable, str(script), empty_url, str(r), str(go)],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT) for r in ready]
    # every process has opened the store: they start their daemons at one instant
    wait_for(lambda: all(r.exists() for r in ready) or any(p.poll() is not None for p in runs),
             120)
    (tmp_path / "go.new").write_text(str(time.time() + 0.3))
    (tmp_path / "go.new").replace(go)
    outputs = [r.communicate(timeout=120)[0].decode() for r in runs]
    assert [r.returncode for r in runs] == [0, 0, 0], outputs
    assert all("started and stopped" in out for out in outputs)
    store = PriceStore(empty_url)
    assert {s.task for s in daemon_module.status(store) if s.next_run} == {"collect"}
    store.dispose()


def test_run_once_runs_what_is_due_and_nothing_twice(
    store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(service_api, "collect_prices", fake_collect(CHEAP, calls))
    config = Config.model_validate({"collect": {"regions": ["us-east-1"]}})
    t0 = datetime(2026, 3, 2, 10, 30, tzinfo=timezone.utc)  # a Monday
    first = run_once(store, config, at=t0)
    assert [(r.task, r.status) for r in first] == [
        ("collect", "ok"), ("replan", "ok"), ("catalog", "ok")]
    assert calls == ["['us-east-1']", "None"]  # the catalog collects every region
    assert run_once(store, config, at=t0 + timedelta(minutes=10)) == []
    assert len(store.task_runs.recent(limit=100)) == 3
    # The hourly collect is due again on the hour; the daily and weekly tasks are not.
    assert [r.task for r in run_once(store, config, at=t0 + timedelta(minutes=30))] == [
        "collect"]
    assert run_once(store, config, at=t0 + timedelta(minutes=31)) == []


def test_a_held_lease_is_a_skip_and_a_failing_task_is_recorded_and_notified(
    store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(store: PriceStore, **kwargs: object) -> RunSummary:
        raise RuntimeError("aws: no credentials")

    monkeypatch.setattr(service_api, "collect_prices", broken)
    config, hooked = hook(tmp_path)
    t0 = datetime(2026, 3, 2, 10, 30, tzinfo=timezone.utc)
    assert store.leases.acquire("replan", "host-b:1:abc", 600, t0)
    runs = {r.task: r for r in run_once(store, config, at=t0)}
    assert (runs["replan"].status, runs["replan"].detail) == (
        "skipped", "lease held by host-b:1:abc")
    assert (runs["collect"].status, runs["collect"].detail) == (
        "failed", "RuntimeError: aws: no credentials")
    assert [e["event"] for e in events(hooked)] == ["failure", "failure"]  # collect, catalog
    # A skip does not serve the trigger: replan runs once the lease is free.
    store.leases.release("replan", "host-b:1:abc")
    assert [r.task for r in run_once(store, config, at=t0 + timedelta(minutes=1))] == [
        "replan"]


def test_logfmt_quotes_values_with_spaces() -> None:
    line = daemon_module.logfmt("info", task="replan", event="stays", job=3, usd=1.5,
                                reason='stay: $1 "here"')
    assert line.split(" ", 1)[0].startswith("ts=20")
    assert line.split(" ", 1)[1] == (
        'level=info task=replan event=stays job=3 usd=1.50 reason="stay: $1 \\"here\\""')


def test_cli_daemon_once_then_status_shows_the_tasks(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service_api, "collect_prices", fake_collect(CHEAP))
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    config = tmp_path / "config.toml"
    config.write_text('[collect]\nregions = ["us-east-1"]\n')
    first = cli("daemon", "--once", "--config", config, "--json")
    assert first.exit_code == 0, first.output
    assert [(r["task"], r["status"]) for r in json.loads(first.stdout)] == [
        ("collect", "ok"), ("replan", "ok"), ("catalog", "ok")]
    again = cli("daemon", "--once", "--config", config)
    assert again.exit_code == 0 and "Nothing due." in again.stdout
    shown = json.loads(cli("status", "--json").stdout)
    assert shown["jobs"] == []
    tasks = {t["task"]: t for t in shown["daemon"]}
    assert tasks["collect"]["last"]["status"] == "ok"
    assert tasks["collect"]["last"]["detail"] == "3 new prices, 0 unchanged"
    assert tasks["replan"]["failures"] == [] and tasks["replan"]["next_run"] is None
    text = cli("status").stdout
    assert "Scheduled optimizer" in text and "3 new prices" in text


def test_the_hourly_replan_re_places_a_job_with_a_deadline(tmp_path: Path) -> None:
    from tests.costsched.service.test_deadline_jobs import WORK_HOURS, deadline_spec, market_of

    store = PriceStore(str(tmp_path / "store.sqlite"))
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5)
    set_prices(store, CHEAP, datetime.now(timezone.utc) - timedelta(hours=1))
    [job] = service.launch(store, deadline_spec(tmp_path, "due", WORK_HOURS + 10),
                           launcher=launcher, wait_seconds=SETTLE,
                           checkpoint_root=str(tmp_path / "checkpoints"))
    try:
        assert (zone_of(store, job.id), market_of(store, job.id)) == ("us-east-1a", "spot")
        # Zone a gets dear and b cheap: the one re-plan task (hourly) asks every running
        # job's decider; the deadline policy moves the job.
        assert Config().schedule.replan == "30 * * * *"
        set_prices(store, DEAR_A, datetime.now(timezone.utc) - timedelta(minutes=30))
        daemon = Daemon(store, Config(), tasks=("replan",), launchers=lambda _: launcher,
                        settle_seconds=SETTLE)
        assert "1 migration started" in daemon.replan()
        assert (zone_of(store, job.id), market_of(store, job.id)) == ("us-east-1b", "spot")
        # A second price change the same hour moves it again: no once-a-day limit.
        set_prices(store, {"us-east-1b": 3.0, "us-east-1c": 0.4},
                   datetime.now(timezone.utc) - timedelta(minutes=10))
        assert "1 migration started" in daemon.replan()
        assert zone_of(store, job.id) == "us-east-1c"
    finally:
        for instance in launcher.instances():
            launcher.terminate(instance.id)
        store.dispose()


# --- a task that did nothing useful is an error; a partial failure a warning ------------------


def summary(clouds: dict[str, CloudSummary], inserted: int = 0) -> RunSummary:
    return RunSummary(clouds, inserted=inserted)


def test_a_collection_where_every_source_failed_is_an_error(
    store: PriceStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # As a user met it: AWS without its SDK, and every region of the other cloud failing.
    nothing = summary({
        "aws": CloudSummary("aws", error="boto3 is not installed: pip install "
                            "'costsched[aws]'"),
        "gcp": CloudSummary("gcp", units=6, failed={f"r{i}": "timeout" for i in range(6)})})
    monkeypatch.setattr(service_api, "collect_prices", lambda store, **kw: nothing)
    caplog.set_level(logging.INFO, logger="costsched.daemon")
    t0 = datetime(2026, 3, 2, 10, 30, tzinfo=timezone.utc)
    daemon = Daemon(store, Config(), tasks=("collect",))
    run = daemon.run_task("collect", t0)
    assert run.status == "failed"
    assert run.detail == ("every source failed: 6 regions failed; aws: boto3 is not "
                          "installed: pip install 'costsched[aws]'")
    [line] = [r.getMessage() for r in caplog.records if "task=collect" in r.getMessage()
              and "event=failed" in r.getMessage()]
    assert "level=error" in line


def test_a_partial_collection_is_a_warning_and_still_ok(
    store: PriceStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    partial = summary({
        "aws": CloudSummary("aws", error="boto3 is not installed"),
        "gcp": CloudSummary("gcp", units=6, failed={"r1": "timeout"})}, inserted=12)
    monkeypatch.setattr(service_api, "collect_prices", lambda store, **kw: partial)
    caplog.set_level(logging.INFO, logger="costsched.daemon")
    run = Daemon(store, Config(), tasks=("collect",)).run_task(
        "collect", datetime(2026, 3, 2, 10, 30, tzinfo=timezone.utc))
    assert run.status == "ok"
    assert run.detail == ("12 new prices, 0 unchanged, 1 region failed; "
                          "aws: boto3 is not installed")
    [line] = [r.getMessage() for r in caplog.records if "event=finished" in r.getMessage()]
    assert "level=warning" in line


def test_a_collection_says_how_the_quotas_read_went(
    store: PriceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from price_collectors.quotas import QuotasRead

    done = summary({"aws": CloudSummary("aws", units=1)}, inserted=3)
    done.quotas = {"aws": QuotasRead(read=24),
                   "gcp": QuotasRead(error="gcp: compute.projects.get is not allowed")}
    monkeypatch.setattr(service_api, "collect_prices", lambda store, **kw: done)
    run = Daemon(store, Config(), tasks=("collect",)).run_task(
        "collect", datetime(2026, 3, 2, 10, 30, tzinfo=timezone.utc))
    assert run.status == "ok"
    assert run.detail == ("3 new prices, 0 unchanged; quotas: aws 24 read, gcp not read "
                          "(compute.projects.get is not allowed)")  # gcp said once


def test_daemon_once_exits_1_when_boto3_is_missing_and_aws_is_all_it_collects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from costsched.cli import app

    # The real collection path, with boto3 not importable.
    monkeypatch.setitem(sys.modules, "boto3", None)
    config = tmp_path / "config.toml"
    config.write_text(f'db = "{tmp_path / "store.sqlite"}"\n'
                      '[collect]\nclouds = ["aws"]\nregions = ["us-east-1"]\n')
    result = CliRunner().invoke(app, ["daemon", "--once", "--config", str(config)])
    assert result.exit_code == 1, result.output
    assert "collect: failed: every source failed" in result.output
    said = [x for x in result.output.splitlines() if x.startswith(("collect:", "catalog:"))]
    assert said and not [x for x in said if "NothingCollected" in x]  # no class names
    assert "aws: boto3 is not installed" in result.output
    assert "replan: ok" in result.output


# --- end to end: a job allowed in two regions -------------------------------------------------


def test_a_job_in_two_regions_is_recovered_then_moved_only_when_the_move_pays(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Launched at home (us-west-2a), preempted and recovered into the other region it
    allows (us-east-1b; the recovery here is `reconcile`'s, as `costsched status` and each
    re-plan run it), then re-planned by the daemon: it stays while a move home would not
    pay, and moves home once it does. The report charges every placement, and the static
    baseline, from the stored prices."""
    import yaml

    from tests.costsched.service.test_jobs import integrate

    store = PriceStore(str(tmp_path / "store.sqlite"))
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5)

    def offer(zone: str, price: float) -> None:
        store.ingest(pd.DataFrame([dict(
            cloud="aws", region=zone[:-1], zone=zone, instance_type="p3.2xlarge",
            market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
            usd_per_hour=price, effective_at=datetime.now(timezone.utc), source="test")]))
        time.sleep(1.1)  # prices are stored to the second: one change per second

    spec = {"name": "two-regions", "throughputs": {"V100": 0.01}, "steps": 3000,
            "run": f"{sys.executable} {TRAIN} --steps 3000 --step-seconds 0.02 "
                   "--checkpoint-every 0.1",
            "constraints": {"regions": ["us-west-2", "us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    for zone, price in (("us-west-2a", 1.0), ("us-west-2b", 3.0), ("us-east-1b", 1.5)):
        offer(zone, price)
    caplog.set_level(logging.INFO, logger="costsched.daemon")
    daemon = Daemon(store, Config(), tasks=("replan",), launchers=lambda _: launcher,
                    settle_seconds=SETTLE)
    try:
        [job] = service.launch(store, path, launcher=launcher, wait_seconds=SETTLE,
                               checkpoint_root=str(tmp_path / "checkpoints"))
        assert zone_of(store, job.id) == "us-west-2a"

        # Preempted; home got dear meanwhile: recovered into the other region.
        offer("us-west-2a", 4.0)
        instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
        launcher.preempt(instance)
        wait_for(lambda: launcher.status(instance).state == "preempted")
        recovered = service.reconcile(store, launcher)
        assert any("preempted; recovery" in line for line in recovered)
        service.settle(store, launcher, SETTLE)
        assert zone_of(store, job.id) == "us-east-1b"

        # Home a shade cheaper: after the move's own cost it would not pay. It stays.
        offer("us-west-2a", 1.49)
        assert "0 migrations started" in daemon.replan()
        [stays] = [r.getMessage() for r in caplog.records if "event=stays" in r.getMessage()]
        assert 'reason="stay: $' in stays
        assert zone_of(store, job.id) == "us-east-1b"

        # Home much cheaper: the move pays, and the daemon makes it.
        offer("us-west-2a", 0.3)
        assert "1 migration started" in daemon.replan()
        [moved] = [r.getMessage() for r in caplog.records if "event=migrated" in r.getMessage()]
        assert "to=aws:us-west-2a:p3.2xlarge:spot" in moved
        assert float(moved.split("usd_saved=")[1].split()[0]) > 0
        wait_for(lambda: zone_of(store, job.id) == "us-west-2a", SETTLE)
        assert [m.kind for m in store.moves.of_job(job.id)] == ["launch", "recovery",
                                                                "migration"]
    finally:
        for live in launcher.instances():
            launcher.terminate(live.id)

    # Every figure of the report from the stored prices.
    later = (datetime.now(timezone.utc) + timedelta(hours=2)).replace(microsecond=0)
    report = build_report(store, now=later)
    history = store.history()
    placed = store.jobs.placements(job.id)
    charged = []
    for p in placed.itertuples():
        prices = history[history["zone"] == p.zone].sort_values("effective_at")
        end = pd.Timestamp(later) if pd.isna(p.end_at) else p.end_at
        charged.append(integrate(prices, p.start_at, end))
    [row] = report.jobs.to_dict("records")
    assert row["compute_usd"] == pytest.approx(sum(charged), rel=1e-9)
    # The static baseline: the same work on the launch choice, us-west-2a, from the launch
    # on, at its own stored prices (1.0, 4.0, 1.49, 0.3). The work: the step the job
    # reported, plus its hours after its record was last written at its measured speed
    # (the step over its hours up to then; one V100 everywhere), in the time that speed
    # takes; without a report, no baseline.
    home = history[history["zone"] == "us-west-2a"].sort_values("effective_at")
    start = placed["start_at"].iloc[0]
    record = store.jobs.get(job.id)
    ends = [pd.Timestamp(later) if pd.isna(p.end_at) else p.end_at for p in placed.itertuples()]
    seconds = sum((e - s).total_seconds() for s, e in zip(placed["start_at"], ends, strict=True))
    read = pd.Timestamp(record.updated_at)
    after = sum(max((e - max(s, read)).total_seconds(), 0.0)
                for s, e in zip(placed["start_at"], ends, strict=True))
    ran = sum(max((min(e, read) - s).total_seconds(), 0.0)
              for s, e in zip(placed["start_at"], ends, strict=True))
    assert record.steps_done > 0 and seconds > 0  # it reported, so it has a measured speed
    speed = record.steps_done / ran
    stay = pd.Timedelta(seconds=round(min(record.steps_done + after * speed, 3000) / speed))
    assert row["launch_choice_usd"] == pytest.approx(integrate(home, start, start + stay), rel=1e-9)
    assert row["saved_vs_launch_choice_usd"] == pytest.approx(row["launch_choice_usd"] - row["usd"])
    store.dispose()


def test_a_run_falling_due_as_the_scheduler_stops_is_not_submitted(
    store: PriceStore, caplog: pytest.LogCaptureFixture
) -> None:
    """The scheduler's loop may look for due runs after `shutdown` shut its executors (it
    was already past its own check): it submits nothing then, logs no traceback, and leaves
    the run due for the next start."""
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

    scheduler = daemon_scheduler._scheduler_class()(timezone="UTC")
    scheduler.add_jobstore(SQLAlchemyJobStore(engine=store.engine,
                                              tablename=daemon_module.JOBSTORE_TABLE))
    scheduler.add_job("time:time", IntervalTrigger(seconds=3600), id="due",
                      next_run_time=datetime.now(timezone.utc) - timedelta(seconds=5))
    scheduler.start(paused=True)
    scheduler.shutdown(wait=True)
    caplog.set_level(logging.DEBUG)
    assert scheduler._process_jobs() is None
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    with store.engine.connect() as conn:  # left due, for the next start
        [due] = conn.execute(sql_text("SELECT next_run_time FROM apscheduler_jobs")).scalars()
    assert due < time.time()


def test_a_daemon_watches_once_as_it_starts_not_an_interval_later(
        running_job, tmp_path: Path) -> None:
    """A job preempted while nothing watched is looked at once a daemon starts, however
    long its interval."""
    store, launcher, _ = running_job
    daemon = Daemon(store, Config(), tasks=(), launchers=lambda _: launcher,
                    watch_seconds=3600)
    daemon.start()
    try:
        passed = wait_for(lambda: [r for r in store.daemons.running(datetime.now(timezone.utc))
                                   if r.pass_at is not None], SETTLE)
    finally:
        daemon.stop()
    assert passed[0].watch_seconds == 3600
