"""Launch a job with a secret while a supervisor started by an earlier launch watches the
store, and walk away: the launch gives the supervisor the secret's value (in memory, over
its private socket), so a preemption of the job is recovered with it, nothing else run.
The value is in no output, log or stored file. Real processes, as in test_walkaway: the
supervisor, the local launcher's instances, a SQLite store."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from costsched import launch_secrets
from costsched.daemon.handoff import advert_path
from costsched.store.leases import process_gone
from tests.costsched.daemon.conftest import World
from tests.costsched.daemon.test_walkaway import invoke, open_instance
from tests.costsched.service.test_jobs import wait_for
from tests.real_jobs import SETTLE

VALUE = "km-Zq8cR2vLx9TkEw4mHand0ff"
ARMED = re.compile(r"Recovery armed: supervisor pid (\d+) (?:\(started earlier\) )?watches "
                   r"this store every 1 s; log: (\S+)")
# The job writes, at each start, whether its environment holds the value (its digest is
# all it is told of it), then runs until it is ended.
CHECK = """import hashlib, os, sys, time
value = os.environ.get("KM_TOKEN")
seen = "absent" if value is None else (
    "given" if hashlib.sha256(value.encode()).hexdigest() == sys.argv[2] else "other")
with open(sys.argv[1], "a") as out:
    out.write(seen + "\\n")
time.sleep(600)
"""


def secret_job(world: World, seen: Path) -> Path:
    """A spot job naming the secret KM_TOKEN, which writes to `seen` whether it has it."""
    script = world.tmp / "check.py"
    script.write_text(CHECK)
    digest = hashlib.sha256(VALUE.encode()).hexdigest()
    path = world.tmp / "sec.yaml"
    path.write_text(yaml.safe_dump({
        "name": "sec", "run": f"{sys.executable} {script} {seen} {digest}", "steps": 3000,
        "throughputs": {"V100": 0.01},
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 30, "size_gb": 0.1},
        "task": {"secrets": ["KM_TOKEN"]}}))
    return path


def test_a_secret_given_at_launch_reaches_a_supervisor_started_before(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KM_TOKEN", raising=False)  # no environment here gives it
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    first = invoke("launch", str(world.sleeper("plain")), "--wait", "30")
    armed = ARMED.search(first)
    assert armed, first
    pid, log = int(armed[1]), Path(armed[2])

    seen = world.tmp / "seen.txt"
    said = invoke("launch", str(secret_job(world, seen)), "--secret", f"KM_TOKEN={VALUE}",
                  "--wait", "30")
    assert f"Recovery armed: supervisor pid {pid} (started earlier)" in said
    assert (f"The supervisor (pid {pid}) was given KM_TOKEN for the recoveries and moves of "
            "the job: held in its memory, never stored") in said
    assert "could not be given" not in said and "was started before" not in said
    [job] = [j for j in world.store.jobs.ids() if world.store.jobs.get(j).name == "sec"]
    wait_for(lambda: seen.exists() and seen.read_text() == "given\n", seconds=SETTLE)
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})  # walked away: this process forgets

    first_instance = open_instance(world, job)
    subprocess.run([sys.executable, "-m", "launchers.local", "preempt", str(job),
                    "--base-dir", str(world.launcher.base_dir)], check=True,
                   capture_output=True)

    def recovered() -> str:
        now = open_instance(world, job)
        running = world.store.jobs.get(job).state == "running"
        return now if running and now not in ("", first_instance) else ""

    wait_for(recovered, seconds=SETTLE, poll=0.1)
    wait_for(lambda: seen.read_text().count("\n") == 2, seconds=SETTLE)
    assert seen.read_text() == "given\ngiven\n"  # the recovered instance has the value too
    assert [m.kind for m in world.store.moves.of_job(job)] == ["launch", "recovery"]
    text = log.read_text()
    assert "event=secrets_given" in text and f"jobs={job} names=KM_TOKEN" in text
    assert "waits for secret" not in text

    status = invoke("status")
    for record in world.store.jobs.records():
        if not record.final:
            invoke("stop", str(record.id))
    wait_for(lambda: process_gone(pid), seconds=SETTLE)
    assert not advert_path(str(log), pid).exists()  # it cleaned up after itself
    secret = VALUE.encode()
    for output in (first, said, status):
        assert VALUE not in output
    stored = [p for p in world.tmp.rglob("*") if p.is_file() and p.name != "check.py"]
    assert log in stored and world.db in stored
    for path in stored:
        assert secret not in path.read_bytes(), path
