"""The report's tables, in the order every view of it shows them (the command line, its
--json, the HTML file, the dashboard's Spend page): one title and one note each."""

from __future__ import annotations

from typing import NamedTuple


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
                "training (part of the compute spend); egress: the checkpoint's copy"),
    ReportTable("egress", "Egress per move", ""),
    ReportTable("budgets", "Jobs near (80% or more) or over their budget",
                "whole-life spend"),
    ReportTable("speeds", "Measured speed against the plan's", "steps per second while "
                "training (setup left out); the savings above use the pace each job kept"),
    ReportTable("estimates", "Estimate versus actual, per job", "what the plan predicted "
                "at launch for the work done so far, beside what it took; ratio = actual / "
                "expected; expected $ is the plan's, as shown at launch: its first start (an "
                "instance's boot and setup, assumed) included, on every launcher"),
    ReportTable("calibration", "Estimate versus actual, by model and GPU", "the median "
                "ratio of actual to expected, and the one furthest from 1"),
)
NAMES = tuple(t.name for t in TABLES)
