"""`plan --emit sky` names in the task's own comment the deadline and budget it leaves out
(SkyPilot has no such fields): a task saved to a file keeps the warning the note on
stderr gives."""

from __future__ import annotations

from pathlib import Path

import yaml

TASK = """\
name: mfrec-w
resources:
  accelerators: {L4: 1, A10G: 1}
  use_spot: true
run: python train_mf.py
costsched:
  throughputs: {L4: 35, A10G: 40}
  steps: 4000
"""


def _header(stdout: str) -> str:
    return " ".join(line.lstrip("# ") for line in stdout.splitlines() if line.startswith("#"))


def test_the_comment_names_the_deadline_and_budget_left_out(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sky-work.yaml"
    path.write_text(TASK + "  deadline: 2h\n  budget: 1\n")
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    header = _header(result.stdout)
    assert (f"Its costsched: section is left out (SkyPilot refuses keys it does not know); "
            f"costsched reads it from {path}. Its deadline (2 h) and budget ($1.00) are left "
            "out (SkyPilot has no such fields): `sky launch` of this task keeps to none of "
            "them.") in header, header
    note = " ".join(result.stderr.split())
    assert ("leaves out its deadline (2 h) and budget ($1.00): SkyPilot has no such fields, "
            "and `sky launch` of it keeps to none of them") in note, note
    pinned = yaml.safe_load(result.stdout)
    assert "costsched" not in pinned and "deadline" not in str(pinned)


def test_one_left_out_is_said_in_the_singular(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sky-work.yaml"
    path.write_text(TASK + "  budget: 1\n")
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    assert ("Its budget ($1.00) is left out (SkyPilot has no such fields): `sky launch` of "
            "this task does not keep to it.") in _header(result.stdout)


def test_a_deadline_given_on_the_command_line_is_named_too(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sky.yaml"
    path.write_text(TASK.split("costsched:")[0])
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01", "--deadline", "3h")
    assert result.exit_code == 0, result.output
    header = _header(result.stdout)
    assert "Its deadline (3 h) is left out (SkyPilot has no such fields)" in header, header
    assert "costsched: section" not in header


def test_nothing_left_out_says_nothing(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sky.yaml"
    path.write_text(TASK.split("costsched:")[0])
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    assert "left out (SkyPilot has no such fields)" not in result.stdout
