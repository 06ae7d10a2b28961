"""Daemons in processes of their own, over a store a job trains in (the local launcher
running examples/train.py, a price source that changes): one stopped with SIGTERM in the
middle of a migration leaves a move the next start completes; two sharing a store run each
trigger once and migrate the job once. Beside tests/costsched/test_daemon.py (the daemon in
the test's process), so that the two files run on two workers at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import (
    TRAIN,
    set_prices,
    wait_for,
    write_spec,
    zone_of,
)
from tests.costsched.test_daemon import CHEAP, DEAR_A, ROOT, aligned, running_job  # noqa: F401
from tests.real_jobs import SETTLE

MOVER_STEPS = 1_000_000

DAEMON_SCRIPT = """
import json, logging, sys, time
from datetime import datetime, timezone
from pathlib import Path
from apscheduler.triggers.interval import IntervalTrigger
from costsched import service
from costsched.config import Config
from costsched.daemon import Daemon
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from price_collectors.runner import CloudSummary, RunSummary
from tests.costsched.service.test_jobs import set_prices

url, base, start, tasks, prices = sys.argv[1:6]
def collect(store, **kwargs):
    got = json.loads(Path(prices).read_text())
    set_prices(store, got, datetime.now(timezone.utc))
    return RunSummary({"aws": CloudSummary("aws")}, inserted=len(got))
service.collect_prices = collect
logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
launcher = LocalLauncher(Path(base), grace_seconds=5)
offsets = {"collect": 0, "replan": 1}  # collect, then re-plan a second later
triggers = {t: IntervalTrigger(seconds=2, start_date=datetime.fromtimestamp(
                int(start) + offsets[t], timezone.utc)) for t in tasks.split(",")}
Daemon(PriceStore(url), Config(), triggers=triggers, tasks=tasks.split(","),
       launchers=lambda _: launcher, settle_seconds=60).serve()
"""


def spawn(tmp_path: Path, url: str, tasks: str, name: str,
          start: int | None = None) -> subprocess.Popen:
    """A daemon process on `url` whose interval triggers start at `start` (epoch seconds;
    default `aligned()`): daemons meant to share a schedule need the same one."""
    prices = tmp_path / "collected.json"
    if not prices.exists():
        prices.write_text(json.dumps(DEAR_A))
    script = tmp_path / "daemon_main.py"
    script.write_text(textwrap.dedent(DAEMON_SCRIPT))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log = (tmp_path / f"{name}.log").open("wb")
    return subprocess.Popen([sys.executable, str(script), url, str(tmp_path / "instances"),
                             str(start if start is not None else int(aligned().timestamp())),
                             tasks, str(prices)],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def terminate(process: subprocess.Popen) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=90)


def test_sigterm_mid_migration_leaves_a_move_the_next_start_completes(
    running_job, tmp_path: Path  # noqa: F811 - the fixture
) -> None:
    store, launcher, job_id = running_job
    set_prices(store, DEAR_A, datetime.now(timezone.utc))
    first = spawn(tmp_path, store.url, "replan", "first")
    try:
        move = wait_for(lambda: next((m for m in store.moves.unfinished()
                                      if m.kind == "migration"), None), SETTLE, poll=0.02)
        assert terminate(first) == 0
    finally:
        if first.poll() is None:
            first.kill()
    log = (tmp_path / "first.log").read_text()
    assert "event=signal signal=SIGTERM" in log and "event=stopped" in log
    assert store.leases.held() == []
    [left] = [m for m in store.moves.of_job(job_id) if m.id == move.id]
    assert not left.ended, left  # stopped between two steps of the move
    [replan] = store.task_runs.recent("replan", statuses=("ok",))
    assert "left unfinished" in replan.detail

    second = spawn(tmp_path, store.url, "replan", "second")
    try:
        wait_for(lambda: store.moves.get(move.id).state == "done", SETTLE)
    finally:
        assert terminate(second) == 0
    assert zone_of(store, job_id) == "us-east-1b"
    migrations = [m for m in store.moves.of_job(job_id) if m.kind == "migration"]
    assert [m.id for m in migrations] == [move.id]
    assert store.jobs.get(job_id).state == "running"
    assert len([i for i in launcher.instances(job_id) if i.live]) == 1


def test_two_daemons_run_each_trigger_once_and_migrate_a_job_once(
    empty_url: str, tmp_path: Path
) -> None:
    store = PriceStore(empty_url)
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5)
    set_prices(store, CHEAP, datetime.now(timezone.utc) - timedelta(hours=1))
    # A job of hours in the model's eyes, even at the speed it measures once it reports:
    # a move to the cheaper zone pays however late a loaded machine's daemons first
    # re-plan (a job of 1,500 steps, measured, had too little left to pay for a move).
    slow = (f"{sys.executable} {TRAIN} --steps {MOVER_STEPS} --step-seconds 0.05 "
            "--checkpoint-every 0.1")
    spec = write_spec(tmp_path, run=slow)
    spec.write_text(yaml.safe_dump({**yaml.safe_load(spec.read_text()), "steps": MOVER_STEPS}))
    [job] = service.launch(store, spec, launcher=launcher,
                           wait_seconds=SETTLE, checkpoint_root=str(tmp_path / "checkpoints"))
    # One start for both daemons and for the check below: each computing its own (a second
    # apart when the spawns straddle a second) gives them schedules a second out of phase.
    start = int(aligned().timestamp())
    daemons = [spawn(tmp_path, empty_url, "collect,replan", f"d{i}", start) for i in range(2)]
    try:  # the budget includes both daemons' start (40 s seen on a loaded 2-core machine;
        # over 180 s beside other suites)
        wait_for(lambda: [m for m in store.moves.of_job(job.id)
                          if m.kind == "migration" and m.state == "done"]
                 and len(store.task_runs.recent("collect", statuses=("ok",))) >= 4, 3 * SETTLE)
    finally:
        codes = [terminate(d) for d in daemons]
        for instance in launcher.instances():
            launcher.terminate(instance.id)
    assert codes == [0, 0], [(tmp_path / f"d{i}.log").read_text()[-3000:] for i in range(2)]
    holders = {r.holder for r in store.task_runs.recent(limit=1000)}
    assert len({h.rsplit(":", 1)[0] for h in holders}) == 2  # both daemons took part
    for task, offset in (("collect", 0), ("replan", 1)):
        ok = store.task_runs.recent(task, statuses=("ok",), limit=1000)
        periods = [int((r.started_at.timestamp() - start - offset) // 2) for r in ok]
        assert len(ok) >= 2 and len(set(periods)) == len(periods), (task, periods)
    migrations = [m for m in store.moves.of_job(job.id) if m.kind == "migration"]
    assert len(migrations) == 1 and migrations[0].state == "done"
    assert zone_of(store, job.id) == "us-east-1b"
    store.dispose()


