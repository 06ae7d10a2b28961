"""The report's tables, in the order every view of it shows them (the command line, its
--json, the HTML file, the dashboard's Spend page): one title and one note each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from costsched.measured import JUDGED_AFTER, TOO_EARLY


class ReportTable(NamedTuple):
    name: str  # the attribute of `Report`, and the key of `report --json`
    title: str
    note: str  # what the table says, where the view has room for it


TABLES = (
    ReportTable("jobs", "Spend per job", "compute and egress in the period, against "
                "on-demand and against the job's launch-time choice kept to the end, each "
                "at its stored prices; - where a baseline does not apply"),
    ReportTable("clouds", "Spend per cloud", "egress is billed by the cloud the checkpoint "
                "left"),
    ReportTable("days", "Spend per day (UTC)", "placements split at midnight UTC"),
    ReportTable("moves", "Migrations, recoveries and starts", "idle: billed without "
                "training (part of the compute spend); egress: the checkpoint's copy; "
                "lost work: the steps a recovery lost, trained again at the pace the job "
                "kept and the price it ran at (part of the compute spend; - where no pace "
                "was measured)"),
    ReportTable("egress", "Egress per move", ""),
    ReportTable("budgets", "Jobs near, over or stopped at their budget",
                "whole-life spend; near: 80% of it or more"),
    ReportTable("speeds", "Measured speed against the plan's", "steps per second while "
                "training (setup left out); the savings above use the pace each job kept"),
    ReportTable("estimates", "Estimate versus actual, per job", "what the plan predicted "
                "at launch for the work done so far, beside what it took; ratio = actual / "
                "expected; expected $ is the plan's, as shown at launch: its first start (an "
                "instance's boot and setup, assumed) included, but on the local launcher, "
                "which boots none: there the start is left out, its setup in total $; total $ "
                "is its spend as above (over its whole life where the period cuts it), a "
                "running job's up to now, its share done up to the step it last reported; "
                f"a running job is '{TOO_EARLY}' until it is {JUDGED_AFTER}, as status says"),
    ReportTable("calibration", "Estimate versus actual, by model and GPU", "the median "
                "ratio of actual to expected, and the one furthest from 1"),
)
NAMES = tuple(t.name for t in TABLES)

# The columns each view leaves out of a table by default (one choice for the command line,
# the HTML file and the dashboard's Spend page; `--json` has every column):
# HIDDEN: said elsewhere on the page (a job's id beside its name, the clouds in the
# regions' names); WIDE: the detail a wide view adds (`report --wide` on the terminal;
# "more columns" under the table in the HTML file and on the Spend page).
HIDDEN = {"days": ["job_id"], "egress": ["from_cloud", "to_cloud"],
          "speeds": ["job_id", "flag", "planned_from"],
          "estimates": ["job_id", "model", "state"]}
WIDE = {"moves": ["priced_total_usd", "priced_egress_usd", "priced_restart_usd",
                  "priced_lost_work_usd", "priced_overlap_usd"]}


def split_columns(name: str, columns: Sequence[str]) -> tuple[list[str], list[str]]:
    """(shown, more) of the table `name`'s `columns`: those a view shows by default, and
    the rest (HIDDEN and WIDE), each in the table's order."""
    left_out = set(HIDDEN.get(name, ())) | set(WIDE.get(name, ()))
    return ([c for c in columns if c not in left_out],
            [c for c in columns if c in left_out])


def row_keys(shown: Sequence[str]) -> list[str]:
    """The columns that tell a table's rows apart, to head its "more columns": the first
    shown and the job's name."""
    return list(dict.fromkeys([*shown[:1], *(c for c in shown if c == "name")]))
