"""The notes under a plan's table explain no mark or column the table left out to fit:
each note on a hidden column says --wide shows it, and with --wide the notes read as
before."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.cli import common

TASK = """\
name: clf
resources:
  accelerators: {L4: 1, A10G: 1}
  use_spot: true
run: python train.py
"""
HIDDEN = "(not shown: --wide shows it)"


def _plan(cli, path: Path, width: int, monkeypatch: pytest.MonkeyPatch, *more: str) -> str:  # noqa: ANN001
    monkeypatch.setattr(common.console, "width", width)
    result = cli("plan", path, *more)
    assert result.exit_code == 0, result.output
    return " ".join(result.stdout.split())


def test_notes_of_hidden_columns_point_at_wide(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    path = tmp_path / "sky.yaml"
    path.write_text(TASK)
    narrow = _plan(cli, path, 80, monkeypatch)
    caption = narrow.split("not shown: ", 1)[1].split(" (--wide", 1)[0]
    assert "preempt/h" in caption and "vs OD V100" in caption, narrow
    assert "~ assumed preemption rate" not in narrow  # the ~ is in the hidden column
    assert f"assumed preemption rate of the preempt/h column {HIDDEN}" in narrow
    assert f"baseline of the vs OD V100 column {HIDDEN}: " in narrow
    assert "speed (" in narrow and f"speed {HIDDEN}: work done" in narrow
    wide = _plan(cli, path, 80, monkeypatch, "--wide")
    assert HIDDEN not in wide
    assert "~ assumed preemption rate: " in wide and "baseline: " in wide


def test_the_estimated_speed_note_says_its_hidden_column_is_shown_by_wide(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    path = tmp_path / "resnet.yaml"  # speeds estimated, offerings of long names
    path.write_text("name: r\nmodel: ResNet-50 (batch size 64)\nsteps: 20000\n")
    narrow = _plan(cli, path, 80, monkeypatch, "--top", "5")
    assert "vs OD V100" in narrow.split("not shown: ", 1)[1].split(" (--wide", 1)[0], narrow
    assert (f"* estimated speed, and the hours, cost and vs OD V100 {HIDDEN} from it "
            "(`costsched throughput show") in narrow
    wide = _plan(cli, path, 200, monkeypatch, "--top", "5", "--wide")
    assert HIDDEN not in wide
    assert ("* estimated speed, and the hours, cost and vs OD V100 from it "
            "(`costsched throughput show") in wide


def test_a_gangs_note_says_its_hidden_speed_column_is_shown_by_wide(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    path = tmp_path / "gang.yaml"
    path.write_text(TASK.replace("name: clf\n", "name: clf\nnum_nodes: 2\n"))
    narrow = _plan(cli, path, 80, monkeypatch)
    assert f"2 nodes: the speed column {HIDDEN} is the gang's pace" in narrow, narrow
    wide = _plan(cli, path, 200, monkeypatch, "--wide")
    assert "2 nodes: the speed column is the gang's pace" in wide and HIDDEN not in wide
