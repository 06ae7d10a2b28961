"""`plan` says whether a deadline can be met with the job's work and its start as the
configured launcher has it, as `launch` on that launcher checks it: a cloud's first start
with the job's own restart (its file's restart_minutes); none on the local launcher, which
boots no instance (plan and launch both take the deadline there). `plan --deadline` names
the flag; `plan --explain` says where the restart comes from."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

# 2,000 steps at 30 steps/s: 0.0185 h of work on g6.xlarge (L4), bundled list prices.
TASK = {"name": "dl2", "resources": {"accelerators": "L4:1", "infra": "aws/us-east-1"},
        "run": "true",
        "costsched": {"steps": 2000, "throughputs": {"L4": 30}, "budget": 5,
                      "checkpoint": {"interval_minutes": 1, "size_gb": 0.1,
                                     "restart_minutes": 0.1}}}


def task(tmp_path: Path, deadline: str) -> Path:
    data = {**TASK, "costsched": {**TASK["costsched"], "deadline": deadline}}
    path = tmp_path / "dl2.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_on_a_cloud_launcher_plan_counts_the_job_s_own_start(cli, tmp_path, monkeypatch
                                                             ) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "aws")
    # 0.0185 h of work and a 0.085 h start (0.1 min + 5 min warm-up + the copy) fit in
    # 0.15 h; the configuration's 10-minute restart would not.
    planned = cli("plan", task(tmp_path, "0.15h"))
    assert planned.exit_code == 0, planned.output
    assert "no plan" not in planned.output
    # 0.1 h is too short for 0.104 h
    planned = cli("plan", task(tmp_path, "0.1h"))
    said = ("job dl2 cannot meet its deadline of 0.1 h on any allowed offering: the "
            "fastest, aws us-east-1 g6.xlarge on-demand, needs 0.104 h (0.019 h to run and "
            "0.085 h to start)")
    assert said in " ".join(planned.output.split())


def test_on_the_local_launcher_plan_and_launch_both_leave_the_start_out(
        cli, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
    late = task(tmp_path, "0.1h")  # 0.019 h of work, no instance to boot: it fits
    planned = cli("plan", late)
    assert planned.exit_code == 0, planned.output
    text = " ".join(planned.output.split())
    assert "no plan" not in text and "cannot meet" not in text, text
    assert ("hours and totals leave out the start of a cloud instance and its boot at each "
            "recovery, as `launch` on the "
            "local launcher (launch.launcher) does: the local launcher boots no instance"
            ) in text, text
    assert "on a cloud launcher they count its first start 0.085" in text, text
    launched = cli("launch", late, "--wait", "0")
    assert launched.exit_code == 0, launched.output
    assert "no plan" not in launched.output and "cannot meet" not in launched.output


def test_plan_deadline_in_the_past_names_the_flag(cli, tmp_path) -> None:
    out = cli("plan", task(tmp_path, "0.15h"), "--deadline", "2019-01-01")
    assert out.exit_code != 0
    text = " ".join(out.output.split())
    assert "--deadline 2019-01-01: 2019-01-01T00:00Z is not after the planning time" in text
    assert "costsched.deadline" not in text


def test_explain_says_where_the_restart_comes_from(cli, tmp_path, cloud_launcher) -> None:
    # (a cloud's launcher: the local one boots no instance, its restarts leave it out)
    out = cli("plan", task(tmp_path, "0.15h"), "--explain", "1")
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    found = re.search(r"restart (\S+) h: 0\.1 min boot and set-up \(checkpoint\."
                      r"restart_minutes in \S*dl2\.yaml\) \+ 5 min warm-up \(\[migration\] "
                      r"warmup_minutes\) \+ 0\.8 s to copy the 0\.1 GB checkpoint at 1 Gbit/s",
                      text)
    assert found, text
    assert f"restart {found[1]} h, rate" in text  # the hours the formula line uses
