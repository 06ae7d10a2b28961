"""`plan --emit sky` writes envs, ports and labels back as the task wrote them: a number stays a
number, true stays true, a quoted number stays text, and a port range stays its text."""

from __future__ import annotations

from pathlib import Path

import yaml

TASK = """\
name: typed
resources:
  accelerators: V100:1
  ports: [8080, '9000', 10000-10010]
  labels: {version: 2, team: ml, pinned: '3'}
envs:
  EPOCHS: 3
  LR: 0.001
  DEBUG: true
  TAG: '7'
  NAME: run
  LATER:
run: python train.py
"""


def emitted(cli, tmp_path: Path, text: str) -> tuple[dict, dict]:  # noqa: ANN001
    path = tmp_path / "task.yaml"
    path.write_text(text)
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    return yaml.safe_load(text), yaml.safe_load(result.stdout)


def test_envs_and_ports_keep_the_types_the_task_wrote(cli, tmp_path: Path) -> None:  # noqa: ANN001
    given, out = emitted(cli, tmp_path, TASK)
    assert out["envs"] == given["envs"]
    assert {k: type(v) for k, v in out["envs"].items()} == {
        k: type(v) for k, v in given["envs"].items()}
    assert out["resources"]["ports"] == [8080, "9000", "10000-10010"]
    assert [type(p) for p in out["resources"]["ports"]] == [int, str, str]
    assert out["resources"]["labels"] == {"version": 2, "team": "ml", "pinned": "3"}
    # What is written reads back as the same task.
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump(out))
    assert cli("plan", again, "--at", "2026-11-01").exit_code == 0


def test_one_port_written_alone_stays_one_number(cli, tmp_path: Path) -> None:  # noqa: ANN001
    text = TASK.replace("ports: [8080, '9000', 10000-10010]", "ports: 8080")
    given, out = emitted(cli, tmp_path, text)
    assert out["resources"]["ports"] == 8080 == given["resources"]["ports"]


def test_a_costsched_section_left_out_is_said_in_the_header(cli, tmp_path: Path) -> None:  # noqa: ANN001
    text = TASK + "costsched:\n  model: ResNet-50 (batch size 64)\n  steps: 1000\n"
    path = tmp_path / "task.yaml"
    path.write_text(text)
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    header = " ".join(line.lstrip("# ") for line in result.stdout.splitlines()
                      if line.startswith("#"))
    assert (f"Its costsched: section is left out (SkyPilot refuses keys it does not know); "
            f"costsched reads it from {path}.") in header
    assert "costsched" not in yaml.safe_load(result.stdout)
    plain = tmp_path / "plain.yaml"
    plain.write_text(TASK)
    assert "section is left out" not in cli("plan", plain, "--emit", "sky",
                                            "--at", "2026-11-01").stdout


def test_the_job_recovery_the_task_wrote_is_kept(cli, tmp_path: Path) -> None:  # noqa: ANN001
    text = TASK.replace("  ports:", "  job_recovery: {strategy: FAILOVER}\n  ports:")
    _, out = emitted(cli, tmp_path, text)
    assert out["resources"]["job_recovery"] == {"strategy": "FAILOVER"}
    older = TASK.replace("  ports:", "  spot_recovery: EAGER_NEXT_REGION\n  ports:")
    _, out = emitted(cli, tmp_path, older)  # SkyPilot's older name, written as the new one
    assert out["resources"]["job_recovery"] == "EAGER_NEXT_REGION"
    assert "spot_recovery" not in out["resources"]
    _, plain = emitted(cli, tmp_path, TASK)
    assert "job_recovery" not in plain["resources"]


def test_emit_sky_with_json_is_refused_in_one_line(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "task.yaml"
    path.write_text(TASK)
    result = cli("plan", path, "--emit", "sky", "--json", "--at", "2026-11-01")
    assert result.exit_code == 2 and not result.stdout.strip(), result.output
    assert "--emit sky" in result.output and "--json" in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
