"""`status` charges its jobs without pandas or numpy (the costs on plain rows): in a fresh
interpreter, so that the suite's own imports do not hide one."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.costs import job_cost
from costsched.service import jobs as service
from costsched.service.jobs.caps import raise_budget
from costsched.service.speeds import checks
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.test_costs import EAST_A, WEST, observe

T0 = datetime(2024, 6, 1, 12, 0, tzinfo=timezone.utc)  # test_costs' hours count from it

# A launcher whose one instance runs (its job in setup: no step reported yet).
PROBE = """
import json, sys
from costsched.migration.launcher import Instance, Launcher
from costsched.service.jobs import status
from costsched.store import PriceStore

class Memory(Launcher):
    name = "memory"
    def can_launch(self, offering): return True
    def launch(self, spec): raise AssertionError("nothing is launched")
    def status(self, instance_id):
        return Instance(instance_id, 2, "a0", %(key)r, "running")
    def request_stop(self, instance_id): raise AssertionError("nothing is stopped")
    def terminate(self, instance_id): raise AssertionError("nothing is ended")
    def instances(self, job_id=None): return [self.status("m-2")]

shown = status(PriceStore(sys.argv[1]), Memory())
print(json.dumps({"costs": {s.record.name: s.cost.total_usd for s in shown},
                  "states": {s.record.name: s.instance_state for s in shown},
                  "loaded": sorted({"pandas", "numpy"} & set(sys.modules))}))
"""


def _store(path: Path, now: datetime) -> tuple[str, PriceStore]:
    """A store with prices that change under its jobs: `done` ran 3 h and moved (its
    checkpoint copied across regions); `live` runs since 5 h before `now` on the memory
    launcher."""
    start = now - timedelta(hours=5)
    url = f"sqlite:///{path / 'jobs.sqlite'}"
    store = PriceStore(url)
    hours = (start - T0).total_seconds() / 3600  # the times observe() counts from T0
    observe(store, EAST_A, [(hours - 1, 0.9), (hours + 1, 1.3)])
    observe(store, WEST, [(hours - 1, 0.6), (hours + 2, 0.8)])
    spec = {"name": "done", "run": "true", "steps": 10,
            "checkpoint": {"location": "/tmp/unused", "size_gb": 30}}
    done = store.jobs.create("done", {"spec": spec, "source": "t", "launcher": "local"}, 10,
                             at=start)
    store.jobs.transition(done, "running", at=start)
    store.jobs.place(done, EAST_A, gpu_model="V100", gpu_count=1, at=start,
                     usd_per_hour=0.9, reason="launch", instance="l-1")
    store.jobs.place(done, WEST, gpu_model="V100", gpu_count=1,
                     at=start + timedelta(hours=1), usd_per_hour=0.6, reason="migration",
                     instance="l-2")
    store.jobs.end_placement(done, start + timedelta(hours=3))
    store.jobs.transition(done, "succeeded", at=start + timedelta(hours=3))
    live_spec = {**spec, "name": "live", "run": "sleep 600"}
    live = store.jobs.create("live", {"spec": live_spec, "source": "t", "launcher": "memory"},
                             10, at=start)
    store.jobs.transition(live, "running", at=start)
    store.jobs.place(live, EAST_A, gpu_model="V100", gpu_count=1, at=start,
                     usd_per_hour=0.9, reason="launch", instance="m-2")
    return url, store


def test_status_of_a_finished_job_loads_neither_pandas_nor_numpy(tmp_path: Path) -> None:
    """The CLI's status of jobs that ended, one of them with a budget of its own (what it
    spent is charged on the same rows)."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    url, store = _store(tmp_path, now)
    store.jobs.transition(2, "stopped", at=now)  # the CLI's status of ended jobs only
    raise_budget(store, 1, 50.0, at=now)
    probe = ("import sys\nfrom costsched.cli import app\n"
             f"try:\n    app(['status', '--db', {url!r}, '--json'])\nexcept SystemExit:\n"
             "    pass\nprint(sorted({'pandas', 'numpy'} & set(sys.modules)), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stderr.strip().splitlines()[-1] == "[]", out.stderr
    document = json.loads(out.stdout)
    jobs = {j["name"]: j for j in document["jobs"]}
    expected = job_cost(store, 1, now=now, checkpoint_gb=30.0)
    assert jobs["done"]["cost_usd"] == expected.total_usd
    assert jobs["done"]["egress_usd"] == expected.egress_usd > 0
    assert [p["usd"] for p in jobs["done"]["placements"]] == \
        expected.placements["usd"].tolist()
    [budget] = document["budgets"]
    assert (budget["name"], budget["usd"]) == ("job 1 (done)", 50.0)
    assert budget["spent_usd"] == pytest.approx(expected.total_usd, rel=1e-12)


def test_status_of_a_finished_and_a_running_job_loads_neither(tmp_path: Path) -> None:
    """Reconciled first (the running job's instance asked, its speed measured), then each
    job charged; the policy's advice (`migrate --dry-run`, on frames) is not asked for."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    url, store = _store(tmp_path, now)
    out = subprocess.run([sys.executable, "-c", PROBE % {"key": EAST_A}, url],
                         capture_output=True, text=True, check=True, timeout=120)
    after = datetime.now(timezone.utc)
    found = json.loads(out.stdout)
    assert found["loaded"] == [], out.stderr
    assert found["states"] == {"done": "", "live": "running"}
    assert found["costs"]["done"] == job_cost(store, 1, now=now, checkpoint_gb=30.0).total_usd
    # The running job to the probe's own now, between the store's making and the probe's
    # end: its first hour at 0.9 $/h, then 1.3 $/h (however long a busy machine took).
    late = (after - now).total_seconds() / 3600
    assert 1 * 0.9 + 4 * 1.3 - 1e-9 <= found["costs"]["live"] <= 1 * 0.9 + (4 + late) * 1.3 + 1e-9


# The CLI's `status`, as JSON then as text, in a fresh interpreter: what it loaded.
CLI_PROBE = """
import sys
from costsched.cli import app
for argv in (["status", "--db", sys.argv[1], "--json"], ["status", "--db", sys.argv[1]]):
    try:
        app(argv)
    except SystemExit:
        pass
    print("\\n---", flush=True)
print(sorted({"pandas", "numpy"} & set(sys.modules)), file=sys.stderr)
"""


def test_status_of_a_running_local_job_loads_neither(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A job the local launcher runs, asked about (reconciled), its measured speed judged
    from its readings and flagged, its cost charged and its latest decision shown: the
    flag and the decision what the frame computation and the store say."""
    url = f"sqlite:///{tmp_path / 'jobs.sqlite'}"
    store = PriceStore(url)
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 1.5},
               datetime.now(timezone.utc) - timedelta(hours=1))
    spec = tmp_path / "live.yaml"
    spec.write_text("name: live\nrun: sleep 120\nthroughputs: {V100: 1.0}\nsteps: 1000\n"
                    "constraints: {regions: [us-east-1], markets: [spot]}\n")
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.2)
    [job] = service.launch(store, spec, launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp_path / "checkpoints"))
    try:
        start = store.jobs.placements(job.id)["start_at"].iloc[0].to_pydatetime()
        # It trained 30 s from its first step: 90 steps, 3 steps/s where 1 was planned.
        store.jobs.record_step(job.id, 10, at=start + timedelta(seconds=1))
        store.jobs.record_step(job.id, 100, at=start + timedelta(seconds=31))
        [decided] = service.migrate(store, launcher, stop=lambda: True,
                                    decided_by="the supervisor")
        [flag] = [c.finding() for c in checks(store.jobs.records([job.id]),
                                              store.jobs.placements(job.id),
                                              readings=store.jobs.readings([job.id])).values()
                  if c.flagged]
        monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
        monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
        out = subprocess.run([sys.executable, "-c", CLI_PROBE, url], capture_output=True,
                             text=True, check=True, timeout=120)
    finally:
        for instance in launcher.instances():
            launcher.terminate(instance.id)
    assert out.stderr.strip().splitlines()[-1] == "[]", out.stderr
    document, text, _ = out.stdout.split("\n---\n")
    [shown] = json.loads(document)["jobs"]
    assert (shown["state"], shown["instance_state"]) == ("running", "running")
    assert shown["throughput_flag"] == flag and "3.00x faster" in flag
    assert shown["next"] == decided.reason and shown["decision"]["decided_by"] == \
        "the supervisor"
    text = " ".join(text.split())  # as wrapped to the terminal's width
    assert f"job {job.id}: throughput: {flag}" in text
    assert f"job {job.id} next: {decided.reason} (decided " in text
