"""A report row's spend and saving visibly make its baseline: one precision for the row's
amounts at which they add up, the saving made from the rounded figures where none does."""

from __future__ import annotations

import math

import pandas as pd

from costsched.cli.common import report_cells
from costsched.report.html import _table, format_cell, table_places


def cents(text: str) -> float:
    return float(text.strip("$<"))


def test_the_demos_row_adds_up() -> None:
    frame = pd.DataFrame([dict(job_id=1, usd=0.0123, on_demand_usd=0.0366,
                               saved_vs_on_demand_usd=0.0366 - 0.0123)])
    columns = ["job_id", "usd", "on_demand_usd", "saved_vs_on_demand_usd"]
    _, [row] = report_cells(frame, columns)
    total, on_demand, saved = (cents(str(c)) for c in row[1:])
    assert abs(total + saved - on_demand) < 1e-9, row
    assert str(row[1]) != "$0.01"  # not at a precision where they cannot add up
    html = _table(frame, table_places(frame))
    assert f"<td class=\"num\">{row[3]}</td>" in html


def test_a_saving_is_made_from_the_rounded_figures_when_no_precision_adds_up() -> None:
    frame = pd.DataFrame([dict(usd=0.012345, on_demand_usd=0.036655,
                               saved_vs_on_demand_usd=0.02431)])
    _, [row] = report_cells(frame, list(frame.columns))
    total, on_demand, saved = (cents(str(c)) for c in row)
    assert abs(total + saved - on_demand) < 1e-9, row


def test_the_totals_are_written_at_the_precision_of_the_rows_they_sum() -> None:
    """Two jobs of $0.0043 and $0.0157: the totals line says $0.0200 (the rows visibly add
    up to it), not $0.02; their 0.054 and 0.0418 hours read 0.054 and 0.042 and their sum
    0.096 (0.05 and 0.04 would not make 0.10); alone, the totals keep their own
    precision."""
    from costsched.report.html import totals_line

    jobs = pd.DataFrame({"usd": [0.0043, 0.0157], "compute_usd": [0.0043, 0.0157],
                         "egress_usd": [0.0, 0.0], "billed_hours": [0.054, 0.0418]})
    totals = {"usd": 0.02, "compute_usd": 0.02, "egress_usd": 0.0,
              "saved_vs_on_demand_usd": 0.0664, "saved_vs_launch_choice_usd": 0.0,
              "billed_hours": 0.0958}
    assert totals_line(totals, jobs) == (
        "Spend $0.0200 (compute $0.0200, egress $0.0000) over 0.096 billed hours; saved "
        "$0.0664 against on-demand and $0.0000 against the launch-time choice kept")
    assert totals_line(totals).startswith("Spend $0.02 (compute $0.02, egress $0.00)")


def test_the_per_cloud_and_per_day_rows_are_written_at_the_per_job_tables_precision() -> None:
    """Two jobs of 0.0075 and 0.0103 hours on one cloud: its row says 0.0178 hours, as the
    totals line does, not 0.02; in the text, the HTML file and the dashboard alike."""
    from costsched.dashboard.render import cell, places
    from costsched.report.html import places_of

    jobs = pd.DataFrame({"name": ["a", "b"], "billed_hours": [0.0075, 0.0103],
                         "usd": [0.0058, 0.0008]})
    clouds = pd.DataFrame({"cloud": ["gcp"], "billed_hours": [0.0178], "usd": [0.0066]})
    found = places_of("clouds", clouds, jobs)
    _, [row] = report_cells(clouds, list(clouds.columns), found)
    assert [str(c) for c in row] == ["gcp", "0.0178", "$0.0066"]
    assert "<td class=\"num\">0.0178</td>" in _table(clouds, found)
    shown = places(clouds.to_dict("records"), "clouds", jobs.to_dict("records"))
    assert cell("billed_hours", 0.0178, shown) == "0.0178"
    # A table that sums nothing keeps its own precision.
    assert places_of("speeds", clouds, jobs)["hours"] == 2


def test_a_gangs_hours_count_each_of_its_nodes_in_the_instance_hours() -> None:
    """A job of 2 nodes for 0.0053 h beside one of 1 node for 0.0022 h: the rows' hours
    sum to 0.0075, the instances ran 0.0128 instance-hours; the line says both, never
    0.0075 instance-hours."""
    from costsched.report.data import totals
    from costsched.report.html import totals_line

    jobs = pd.DataFrame({"job_id": [1, 2], "name": ["pair", "one"], "state": ["succeeded"] * 2,
                         "nodes": [2, 1], "billed_hours": [0.0053, 0.0022],
                         "compute_usd": [0.0077, 0.0002], "egress_usd": [0.0, 0.0],
                         "usd": [0.0077, 0.0002], "on_demand_usd": [0.0106, 0.0018],
                         "saved_vs_on_demand_usd": [0.0029, 0.0016],
                         "launch_choice_usd": [None] * 2,
                         "saved_vs_launch_choice_usd": [None] * 2})
    summed = totals(jobs.to_dict("records"))
    assert summed["billed_hours"] == 0.0075 and abs(summed["instance_hours"] - 0.0128) < 1e-12
    assert totals_line(summed, jobs).startswith(
        "Spend $0.0079 (compute $0.0079, egress $0.0000) over 0.0075 billed hours (0.0128 "
        "instance-hours, each node counted); saved")
    one = jobs.iloc[[1]]
    assert " over 0.0022 billed hours; " in totals_line(
        totals(one.to_dict("records")), one)


def test_a_checkpoint_of_a_megabyte_is_no_zero_gigabytes() -> None:
    """The egress table's GB follow the rule of hours: 0.0010 for a 1 MB checkpoint, as an
    amount under a cent keeps two significant digits, never 0.00."""
    from costsched.report.html import format_cell

    assert [format_cell("gb", v) for v in (0.001, 0.1, 1234.5, 0.0)] == [
        "0.0010", "0.10", "1,234.50", "0.00"]


def test_the_totals_are_the_sums_of_the_cells_as_written() -> None:
    """A saving of $0.027402 beside a spend of $0.003149 and a baseline of $0.030551
    reads $0.02740 in its row and in the totals line, as the JSON's figure does (at five
    decimals the three add up each as written alone; at four, $0.0306 - $0.0031 would
    make $0.0275 of the exact $0.0274); where no precision does that (two rows' savings
    of $0.01343434), each saving is its baseline less its spend as written ($0.0269 -
    $0.0134 = $0.0135) and the totals are their sum ($0.0270): in the text, the HTML
    file and the dashboard alike."""
    from costsched.dashboard.render import shown
    from costsched.report.cells import shown_rows, totals_line
    from costsched.report.data import totals

    def row(job_id: int, spent: float, on_demand: float) -> dict:
        return dict(job_id=job_id, name="j", state="succeeded", nodes=1, billed_hours=0.5,
                    compute_usd=spent, egress_usd=0.0, usd=spent, on_demand_usd=on_demand,
                    saved_vs_on_demand_usd=on_demand - spent, launch_choice_usd=math.nan,
                    saved_vs_launch_choice_usd=math.nan)

    one = [row(1, 0.003149, 0.030551)]  # 0.027402 exact
    places, [cells] = shown_rows("jobs", {"jobs": one})
    made = [format_cell(c, cells[c], places) for c in ("on_demand_usd", "usd",
                                                       "saved_vs_on_demand_usd")]
    assert made == ["$0.03055", "$0.00315", "$0.02740"]
    line = totals_line(totals(one), {"jobs": one})
    assert "saved $0.02740 against on-demand" in line, line
    assert shown({"jobs": one}, "jobs")[1][0]["saved_vs_on_demand_usd"] == 0.0274
    html = _table(*reversed(shown_rows("jobs", {"jobs": one})))
    assert "<td class=\"num\">$0.02740</td>" in html

    # 0.01343434 spent and saved a row: at no precision up to four (above a cent) do a
    # row's three figures add up each as it reads alone.
    two = [row(1, 0.01343434, 0.02686868), row(2, 0.01343434, 0.02686868)]
    places, cells = shown_rows("jobs", {"jobs": two})
    assert [format_cell("saved_vs_on_demand_usd", r["saved_vs_on_demand_usd"], places)
            for r in cells] == ["$0.0135", "$0.0135"]  # $0.0269 - $0.0134
    line = totals_line(totals(two), {"jobs": two})
    assert "saved $0.0270 against on-demand" in line and "Spend $0.0268 " in line, line


def test_the_per_day_and_per_cloud_columns_sum_to_the_totals_as_written() -> None:
    """Two jobs' days of $0.01343434 each (no precision at which each reads as alone
    and they add up): each job's row $0.0134, the totals $0.0268, and the one cloud's
    row $0.0268 (its exact $0.02686868 shared out as the totals read), not $0.0269; a
    day's total is its compute and egress as written."""
    from costsched.report.cells import shown_rows, totals_line
    from costsched.report.data import totals

    x = 0.01343434
    jobs = [dict(job_id=i, name="j", state="succeeded", nodes=1, billed_hours=0.1,
                 compute_usd=x, egress_usd=0.0, usd=x, on_demand_usd=math.nan,
                 saved_vs_on_demand_usd=math.nan, launch_choice_usd=math.nan,
                 saved_vs_launch_choice_usd=math.nan) for i in (1, 2)]
    clouds = [dict(cloud="aws", billed_hours=0.2, compute_usd=2 * x, egress_usd=0.0,
                   usd=2 * x)]
    tables = {"jobs": jobs, "clouds": clouds, "days": []}
    assert totals_line(totals(jobs), tables).startswith("Spend $0.0268 (compute $0.0268")
    places, [cloud] = shown_rows("clouds", tables)
    assert [format_cell(c, cloud[c], places) for c in ("compute_usd", "usd")] == [
        "$0.0268", "$0.0268"]
