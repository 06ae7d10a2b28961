"""`plan` and `launch` agree whether a deadline can be met and say the same hours: the
job's work and its first start, the job's own restart (its file's restart_minutes). A
launch that refuses never says first that the job fits; `plan --deadline` names the flag;
`plan --explain` says where the restart comes from."""

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


def test_plan_and_launch_count_the_job_s_own_start_alike(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
    # 0.0185 h of work and a 0.085 h start (0.1 min + 5 min warm-up + the copy) fit in
    # 0.15 h; the configuration's 10-minute restart would not.
    fits = task(tmp_path, "0.15h")
    planned = cli("plan", fits)
    assert planned.exit_code == 0, planned.output
    assert "no plan" not in planned.output
    # 0.1 h is too short for 0.104 h: both say so, in the same words.
    late = task(tmp_path, "0.1h")
    planned = cli("plan", late)
    said = ("job dl2 cannot meet its deadline of 0.1 h on any allowed offering: the "
            "fastest, aws us-east-1 g6.xlarge on-demand, needs 0.104 h (0.019 h to run and "
            "0.085 h to start)")
    assert said in " ".join(planned.output.split())
    launched = cli("launch", late, "--wait", "0")
    assert launched.exit_code != 0
    assert said in " ".join(launched.output.split())
    # Refused: it never said first that the job fits its budget.
    assert "fits" not in launched.output


def test_plan_deadline_in_the_past_names_the_flag(cli, tmp_path) -> None:
    out = cli("plan", task(tmp_path, "0.15h"), "--deadline", "2019-01-01")
    assert out.exit_code != 0
    text = " ".join(out.output.split())
    assert "--deadline 2019-01-01: 2019-01-01T00:00Z is not after the planning time" in text
    assert "costsched.deadline" not in text


def test_explain_says_where_the_restart_comes_from(cli, tmp_path) -> None:
    out = cli("plan", task(tmp_path, "0.15h"), "--explain", "1")
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    found = re.search(r"restart (\S+) h: 0\.1 min boot and set-up \(checkpoint\."
                      r"restart_minutes in \S*dl2\.yaml\) \+ 5 min warm-up \(\[migration\] "
                      r"warmup_minutes\) \+ 0\.8 s to copy the 0\.1 GB checkpoint at 1 Gbit/s",
                      text)
    assert found, text
    assert f"restart {found[1]} h, rate" in text  # the hours the formula line uses
