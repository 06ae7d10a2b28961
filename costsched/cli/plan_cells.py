"""The cells of a plan's ranking that multiply out: each row's $/h, expected hours and
total, and the baseline's line under the table. The decimals they share are read once
(`plan_figures.total_places`, `plan_figures.product_places`) and feed both the $/h and
the hours columns. The baseline's cost reads by one rule wherever it stands
(`baseline_places`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from costsched.amounts import MAX_DECIMALS, decimals, stored_price, usd
from costsched.cli import plan_figures as figures
from costsched.lazy import pandas as pd
from costsched.work import Work


class RankingCells(NamedTuple):
    """A ranking's cells: `work` (each row's under `work_columns`, the baseline's hours and
    cost last where there is one and the work is not assumed), `prices` (the $/h column)
    and `baseline` (its line under the table, '' without one)."""

    work: list[list[str]]
    prices: list[str]
    baseline: str


def ranking_cells(shown: pd.DataFrame, work: Work | None, estimated: pd.Series | None,
                  baseline: Any, steps_estimated: bool) -> RankingCells:
    """The cells of the rows `shown` of a job's ranking and its `baseline`'s line (None:
    none), marked where `estimated` (the rows' speeds) or `steps_estimated`; each row's
    $/h times its hours reads as its total (unless the work is assumed: a rate per hour of
    work, no hours)."""
    beside = None if baseline is None else (baseline.hours, baseline.cost)
    extra = [] if beside is None else [beside]
    costs = [*shown["expected_cost"], *(c for _, c in extra)]
    spans = [*shown["expected_hours"], *(h for h, _ in extra)]
    total_at = figures.total_places(shown, costs)  # one precision down each column
    hours_at = figures.product_places(shown, total_at, decimals(spans))
    cells = figures.work_cells(shown, work, (total_at, hours_at), estimated, beside)
    cells[:len(shown)] = figures.budget_marked(cells[:len(shown)], shown)
    prices = figures.price_cells(shown)
    line = "" if baseline is None else baseline_line(baseline, work, cells, steps_estimated)
    return RankingCells(cells, prices, line)


def baseline_places(column: Sequence[str]) -> int:
    """The decimals of the baseline's cost: MAX_DECIMALS, more where the column it is read
    against (`column`: its cells as written) takes more, so that it reads alike in every
    plan ('$0.7590', never '$0.759' under another column)."""
    return max([MAX_DECIMALS, *(figures.written_places(c) or 0 for c in column)])


def baseline_line(b: Any, work: Work | None, cells: list[list[str]],
                  steps_estimated: bool) -> str:
    """'baseline: on-demand 1xV100, 0.25 h x $3.0600/h = $0.7590*': its hours times its
    price making its cost (`baseline_places`); assumed work, its cost per hour of work."""
    mark = figures.ESTIMATED_MARK if b.estimated or steps_estimated else ""
    why = [*(["an estimated V100 speed"] if b.estimated else []),
           *(["the estimated steps"] if steps_estimated else [])]
    if work is not None and work.assumed and work.hours:
        places = baseline_places([row[0] for row in cells])
        said = (f"at {stored_price(b.usd_per_hour)}/h: {usd(b.cost / work.hours, places)}{mark} "
                f"per {work.unit()}")
    else:
        places = baseline_places([row[-1] for row in cells])
        said = figures.times_line(b.hours, b.usd_per_hour, b.cost,
                                  (cells[-1][0], usd(b.cost, places)), mark)
    return (f"baseline: {b.basis}, {said}"
            + (f" ({mark} from {' and '.join(why)})" if mark else ""))
