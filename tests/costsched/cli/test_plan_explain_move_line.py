"""`plan --explain`'s move line states the move's price at the precision of the cost line
above it, its items adding up to it as written; the checkpoint's size is said only where
the job's file gives it, else that it is not given and the key that gives it (never '0
GB')."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

TASK = ("name: kws\nresources:\n  accelerators: {T4: 1, L4: 1, V100: 1}\n  use_spot: true\n"
        "  cloud: aws\nrun: python train.py\n")
AT = "2026-11-28"
MOVE = re.compile(r"a move here from (?P<source>[^:]+): \$(?P<total>[0-9.]+) \(egress "
                  r"\$(?P<egress>[0-9.]+)(?P<size> for [0-9.]+ GB)?, restart \$(?P<restart>"
                  r"[0-9.]+), lost work \$(?P<lost>[0-9.]+), overlap \$(?P<overlap>[0-9.]+)\)"
                  r"(?P<rest>.*)")
COST = re.compile(r"expected cost = \S+ h x \$\S+/h = \$(?P<cost>[0-9.]+)")


def _explained(cli, path: Path, row: str) -> list[str]:  # noqa: ANN001
    shown = cli("plan", path, "--at", AT, "--explain", row, "--from", "1", "--json")
    assert shown.exit_code == 0, shown.output
    return json.loads(shown.stdout)["explain"]


def _move_line(lines: list[str]) -> str:
    """The line that prices the move (a line on its assumed lost work may follow it)."""
    return next(line for line in lines if line.startswith("a move here from "))


def _places(figure: str) -> int:
    return len(figure.partition(".")[2])


@pytest.mark.parametrize("extra", ["", "costsched:\n  checkpoint: {size_gb: 0.2}\n"])
def test_the_move_line_adds_up_at_the_cost_lines_precision(cli, tmp_path: Path,  # noqa: ANN001
                                                          extra: str) -> None:
    path = tmp_path / "sky.yaml"
    path.write_text(TASK + extra)
    for row in ("2", "3"):
        lines = _explained(cli, path, row)
        cost = next(m for line in lines if (m := COST.search(line)))
        line = _move_line(lines)
        move = MOVE.fullmatch(line)
        assert move is not None, line
        figures = [move[k] for k in ("total", "egress", "restart", "lost", "overlap")]
        assert {_places(f) for f in figures} == {_places(cost["cost"])}, (line, cost)
        assert sum(Decimal(f) for f in figures[1:]) == Decimal(figures[0]), line
        if extra:
            assert move["size"] == " for 0.2 GB" and move["rest"] == "", line
        else:
            assert move["size"] is None and "0 GB" not in line, line
            assert move["rest"] == (
                "; the checkpoint's size is not given, so no egress is counted: "
                f"`costsched: {{checkpoint: {{size_gb: G}}}}` in {path} gives it")


def test_a_job_files_own_format_names_its_own_key(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "job.yaml"
    path.write_text("name: own\nmodel: ResNet-50 (batch size 64)\nsteps: 20000\n"
                    "constraints: {gpu_models: [T4, V100], markets: [spot], clouds: [aws]}\n")
    line = _move_line(_explained(cli, path, "2"))
    assert line.endswith(f"no egress is counted: `checkpoint: {{size_gb: G}}` in {path} "
                         "gives it"), line
