"""Money in one line or one row reads at one precision, a budget the user set among the
figures too; `plan --emit sky`'s cost reads as the plan's table writes it."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from costsched.amounts import given
from costsched.report.budgets_now import budget_cells
from costsched.report.cells import format_cell


def _places(cells: list[str]) -> set[int]:
    return {len(c.partition(".")[2]) for c in cells if c.startswith("$")}


def test_a_budget_alone_reads_as_typed_and_beside_others_at_their_precision() -> None:
    assert given(0.006) == "$0.006" and given(2) == "$2.00" and given(2.5) == "$2.50"
    assert given(0.006, 4) == "$0.0060" and given(2, 4) == "$2.0000"
    assert given(0.006, 2) == "$0.006"  # never '$0.01': it takes the decimals it needs


def test_a_budgets_row_reads_at_one_precision_its_cap_too() -> None:
    state = SimpleNamespace(name="job 1 (kws-budget)", period="total", usd=0.006,
                            spent_usd=0.0023, committed_usd=0.0015, forecast_usd=0.0142,
                            kind="job", jobs=[1], running=[1], stopped=[])
    [row] = budget_cells([state], 4)
    assert row[2:6] == ["$0.0060", "$0.0023", "$0.0015", "$0.0142"]  # was '$0.006'
    assert _places(row) == {4}


def test_the_reports_budget_column_reads_at_its_rows_precision() -> None:
    assert format_cell("budget_usd", 0.006, {"usd": 4, "charged": 1}) == "$0.0060"
    assert format_cell("budget_usd", 0.006) == "$0.006"  # alone: as typed


def test_a_stop_at_a_budget_says_the_budget_at_the_lines_precision() -> None:
    from costsched.service.jobs.decider import budget_verdict

    line = budget_verdict("its own budget", 0.0059, 0.0003, 0.006)
    assert line is not None and line.endswith("would pass the budget of $0.0060"), line
    figures = re.findall(r"\$\d+\.(\d+)", line)
    assert len({len(f) for f in figures}) == 1, line


TASK = """\
name: kws
resources:
  accelerators: T4:1
  use_spot: true
  cloud: aws
run: python train.py
"""


def test_the_emitted_tasks_cost_reads_as_the_plans_table(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sky.yaml"
    for extra in ("", "costsched: {steps: 2500, throughputs: {T4: 30}}\n"):
        path.write_text(TASK + extra)
        table = cli("plan", str(path), "--at", "2026-11-28").stdout
        best = next(line for line in table.splitlines() if line.startswith("│ 1 │"))
        shown = re.findall(r"\$[\d,]+\.\d+", best)[-1]  # the row's last amount: its cost
        emitted = cli("plan", str(path), "--at", "2026-11-28", "--emit", "sky").stdout
        said = re.search(r"expected \S+ h x \$\S+/h = (\$[\d,]+\.\d+)", emitted)
        assert said is not None and said[1] == shown, (best, emitted)
