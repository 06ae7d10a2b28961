"""Each row of a plan's table multiplies out as printed: its $/h times its hours read as
its total does (a spot job of a task file, a job of costsched's own format, small and
large), as a status placement line does. A gang's row (its total for N instances) is the
exception the GPUs column says."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.amounts import usd

AT = "2026-11-01T00:00:00Z"
TASK = """\
name: lm
run: python train.py
resources: {accelerators: {L4: 1, A10G: 1, T4: 1}, use_spot: true}
costsched: {steps: STEPS, throughputs: {L4: 12.5, A10G: 14, T4: 8}}
"""


def rows(text: str) -> tuple[list[str], list[list[str]]]:
    header = next(line for line in text.splitlines() if line.startswith("┃"))
    return ([c.strip() for c in header.split("┃")[1:-1]],
            [[c.strip() for c in line.split("│")[1:-1]] for line in text.splitlines()
             if line.startswith("│")])


def figure(cell: str) -> tuple[float, int]:
    text = cell.rstrip("*~").lstrip("$").replace(",", "")
    return float(text), len(text.partition(".")[2])


@pytest.mark.parametrize("steps", [1500, 40_000, 3_000_000])
def test_each_row_multiplies_out_as_printed(cli, tmp_path: Path, steps: int) -> None:  # noqa: ANN001
    path = tmp_path / "sky.yaml"
    path.write_text(TASK.replace("STEPS", str(steps)))
    shown = cli("plan", path, "--at", AT, "--top", "8")
    assert shown.exit_code == 0, shown.output
    columns, table = rows(shown.stdout)
    assert len(table) >= 4
    price, span, total = (columns.index(c) for c in ("$/h", "hours", "total $"))
    for row in table:
        (p, _), (h, _), (t, places) = (figure(row[i]) for i in (price, span, total))
        assert usd(p * h, places) == row[total].rstrip("*~"), (row, shown.stdout)
