"""`daemon stop` ends the supervisor that held, in its memory only, a secret given at launch
for a running job: it names that job and its secret, and how to arm its recovery again (a
daemon started from a shell that sets it), rather than only `costsched daemon start`, which
from this shell would leave the job's recovery waiting. Real processes, as in
test_secret_handoff: the supervisor, the local launcher's instances, a SQLite store."""

from __future__ import annotations

import json
import re

import pytest

from costsched import launch_secrets
from costsched.store.leases import process_gone
from tests.costsched.daemon.conftest import World
from tests.costsched.daemon.test_secret_handoff import ARMED, VALUE, secret_job
from tests.costsched.daemon.test_walkaway import invoke


def test_daemon_stop_names_the_jobs_whose_secrets_it_took_away(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KM_TOKEN", raising=False)  # no environment here gives it
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    invoke("launch", str(world.sleeper("plain")), "--wait", "30")
    said = invoke("launch", str(secret_job(world, world.tmp / "seen.txt")), "--secret",
                  f"KM_TOKEN={VALUE}", "--wait", "30")
    armed = ARMED.search(said)
    assert armed, said
    pid = int(armed[1])
    [job] = [j for j in world.store.jobs.ids() if world.store.jobs.get(j).name == "sec"]
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})  # `daemon stop` in a new shell

    stopped = invoke("daemon", "stop")
    assert f"Stopped supervisor pid {pid}." in stopped and process_gone(pid)
    lines = [" ".join(x.split()) for x in stopped.strip().splitlines()]
    named = (f"Job {job} (sec) needs KM_TOKEN for its recoveries and moves, which no daemon "
             "holds now and this shell does not set: start the daemon again in a shell that "
             "sets it (`KM_TOKEN=... costsched daemon start`); started from this one, its "
             "recovery would wait.")
    assert named in lines, lines
    assert not any("(plain)" in line for line in lines)  # a job without secrets: not named
    assert VALUE not in stopped
    doc = json.loads(invoke("daemon", "stop", "--json"))
    assert doc["not_armed"] == [{"job_id": job, "name": "sec", "secrets": ["KM_TOKEN"],
                                 "line": named}]

    # In a shell that sets it, `daemon start` is all it takes: no job is named.
    monkeypatch.setenv("KM_TOKEN", VALUE)
    assert "needs KM_TOKEN" not in invoke("daemon", "stop")
    restarted = invoke("daemon", "start")
    assert re.search(r"supervisor pid \d+", restarted) and "not armed" not in restarted
