"""A job stopped with `costsched stop` reads in `status` with the command that starts it
again and the step it resumes from (its newest verified checkpoint's, as its stop recorded
it), and that command, run as printed, resumes it there: a real local-launcher job."""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from pathlib import Path

import pytest

TRAIN = Path(__file__).resolve().parents[3] / "examples" / "train.py"


def test_a_stopped_job_says_where_start_resumes_it(cli, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    run = (f"{shlex.quote(sys.executable)} {shlex.quote(str(TRAIN))} --steps 100000 "
           "--step-seconds 0.01 --checkpoint-every 0.2")
    path = tmp_path / "long.yaml"
    path.write_text(f"name: long\nrun: {json.dumps(run)}\nsteps: 100000\n"
                    "throughputs: {V100: 100}\nconstraints: {regions: [us-east-1]}\n")
    launched = cli("launch", path, "--wait", "30")
    assert launched.exit_code == 0, launched.output
    try:
        deadline = time.monotonic() + 120  # a hang's bound, not a speed
        while time.monotonic() < deadline:
            job = json.loads(cli("status", "long", "--json").output)["jobs"][0]
            if (job.get("step") or 0) > 50:
                break
            time.sleep(0.5)
        assert cli("stop", "long").exit_code == 0
        doc = json.loads(cli("status", "long", "--json").output)["jobs"][0]
        assert doc["state"] == "stopped" and doc["step"] > 0, doc
        text = " ".join(cli("status", "long").output.split())
        said = re.search(r"`(costsched start (\d+))` starts it again from step ([\d,]+), its "
                         r"newest verified checkpoint's", text)
        assert said, text
        step = int(said[3].replace(",", ""))
        assert step == doc["step"]  # the step status says it stopped at: its checkpoint's
        started = cli(*said[1].split()[1:], "--wait", "30")
        assert started.exit_code == 0, started.output
        deadline = time.monotonic() + 120
        while f"resumed at step {step}" not in cli("logs", "long").output:
            assert time.monotonic() < deadline, cli("logs", "long").output
            time.sleep(0.5)
    finally:
        cli("stop", "long")


def test_a_job_stopped_in_its_setup_starts_from_step_0(cli, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped before it published any checkpoint (in its setup), its hint names step 0,
    as a failed job's does, never a checkpoint it does not have; the start says so too."""
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    run = f"{shlex.quote(sys.executable)} {shlex.quote(str(TRAIN))} --steps 100"
    path = tmp_path / "slow.yaml"
    path.write_text(f"name: slow\nsetup: sleep 60\nrun: {json.dumps(run)}\nsteps: 100\n"
                    "throughputs: {V100: 100}\nconstraints: {regions: [us-east-1]}\n")
    launched = cli("launch", path, "--wait", "30")
    assert launched.exit_code == 0, launched.output
    try:
        assert cli("stop", "slow").exit_code == 0
        text = " ".join(cli("status", "slow").output.split())
        said = re.search(r"`(costsched start (\d+))` starts it again from step 0: it "
                         r"published no checkpoint", text)
        assert said, text
        assert "newest verified checkpoint" not in text
        started = cli(*said[1].split()[1:], "--wait", "0")
        assert started.exit_code == 0, started.output
        assert "resumes from step 0 (no checkpoint yet)" in " ".join(started.output.split())
    finally:
        cli("stop", "slow")
