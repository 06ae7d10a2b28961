"""A small job's plan writes its totals and prices per hour at the decimals that tell its
offerings apart: totals under a dime read as `launch` reads the chosen one ('$0.0103',
never '$0.01'), and two rows whose figures differ never read alike."""

from __future__ import annotations

import json
from pathlib import Path

from costsched.amounts import decimals_kept, usd

JOB = """\
name: moons-job
run: python train.py
steps: 1500
throughputs: {T4: 10, L4: 10}
checkpoint: {size_gb: 0.001, interval_minutes: 0.17, restart_minutes: 0.1}
constraints:
  markets: [spot]
  gpu_models: [T4, L4]
"""
AT = "2026-11-01T00:00:00Z"


def rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("│")[1:-1]] for line in text.splitlines()
            if line.startswith("│")]


def test_small_totals_read_apart_and_as_launch_reads_them(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "job.yaml"
    path.write_text(JOB)
    shown = cli("plan", path, "--at", AT, "--top", "6", "--wide")
    assert shown.exit_code == 0, shown.output
    doc = json.loads(cli("plan", path, "--at", AT, "--top", "6", "--json").stdout)
    ranked = doc["rankings"][0]["ranking"]
    table = rows(shown.stdout)
    assert len(table) == len(ranked) == 6
    header = next(line for line in shown.stdout.splitlines() if line.startswith("┃"))
    columns = [c.strip() for c in header.split("┃")[1:-1]]  # ('price of' where one is old)
    totals = [r[columns.index("total $")].rstrip("*!~") for r in table]
    prices = [r[columns.index("$/h")] for r in table]
    # the chosen offering's total as a launch's budget line writes it
    best = ranked[0]["expected_cost"]
    assert totals[0] == usd(best, decimals_kept([best]))
    for i in range(len(ranked)):
        for j in range(len(ranked)):
            if ranked[i]["expected_cost"] != ranked[j]["expected_cost"]:
                assert totals[i] != totals[j], (totals[i], totals[j])
            if ranked[i]["usd_per_hour"] != ranked[j]["usd_per_hour"]:
                assert prices[i] != prices[j], (prices[i], prices[j])
    assert len({len(t.partition(".")[2]) for t in totals}) == 1  # one precision down it
