"""`plan --json` of a sweep: each job's collection figures are its ranking's (one estimate of
a job on an offering), in the JSON as in the table."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

AT = "2020-03-01T00:00Z"
SWEEP = ("name: mf-sweep\nrun: python train.py --lr $LR\nthroughputs: {V100: 20, K80: 5}\n"
         "steps: 2000\nsweep:\n  LR: [0.01, 0.05, 0.2]\nconstraints: {markets: [spot]}\n")


@pytest.fixture()
def sweep(tmp_path: Path) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP)
    return path


def test_the_collections_json_reads_as_the_rankings(cli, recorded_store, sweep: Path,
                                                    cloud_launcher: str) -> None:  # noqa: ANN001
    result = cli("plan", str(sweep), "--top", "50", "--json", "--at", AT, "--db",
                 recorded_store.url)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    ranked = {(job, r["offering"]): r for shared in doc["rankings"]
              for r in shared["ranking"] for job in shared["jobs"]}
    assignment = doc["collection"]["assignment"]
    assert len(assignment) == 3
    for row in assignment:
        r = ranked[(row["job"], row["offering"])]
        assert row["hours"] == pytest.approx(r["expected_hours"], rel=1e-9)
        assert row["cost"] == pytest.approx(r["expected_cost"], rel=1e-9)
        assert r["start_hours"] > 0  # (a start the collection counts too)
    assert doc["collection"]["total_cost"] == pytest.approx(
        sum(a["cost"] for a in assignment), rel=1e-9)


def test_the_collections_table_reads_as_the_rankings(cli, recorded_store, sweep: Path,  # noqa: ANN001
                                                     monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COLUMNS", "250")
    result = cli("plan", str(sweep), "--top", "1", "--at", AT, "--db", recorded_store.url)
    assert result.exit_code == 0, result.output
    ranking, collection = result.stdout.split("Collection plan")
    first = re.search(r"│ 1 │ (.+?) +│.*│ +([\d.]+) │ +(\$[\d.]+) │", ranking)
    offering, hours, cost = first.groups()
    rows = re.findall(r"│ mf-sweep-\d │ (.+?) +│ +([\d.]+) │ +(\$[\d.]+) │", collection)
    assert rows == [(offering, hours, cost)] * 3, result.stdout


def test_the_collections_heading_reads_at_its_rows_decimals_and_adds_them_up(
        cli, recorded_store, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """A sweep of short jobs (a few cents each): the heading's total is the sum of its rows
    as they read, at their decimals, and its makespan the longest row as it reads."""
    monkeypatch.setenv("COLUMNS", "250")
    sweep = tmp_path / "short.yaml"
    sweep.write_text(SWEEP.replace("steps: 2000", "steps: 60"))
    result = cli("plan", str(sweep), "--top", "1", "--at", AT, "--db", recorded_store.url)
    assert result.exit_code == 0, result.output
    collection = result.stdout.split("Collection plan")[1]
    total, makespan = re.search(r"total \$([\d.]+), makespan ([\d.]+) h", collection).groups()
    rows = re.findall(r"│ mf-sweep-\d │ .+? +│ +([\d.]+) │ +\$([\d.]+) │", collection)
    assert len(rows) == 3, result.stdout
    places = len(rows[0][1].split(".")[1])
    assert places > 2 and len(total.split(".")[1]) == places, result.stdout
    assert Decimal(total) == sum(Decimal(cost) for _, cost in rows), result.stdout
    assert makespan == max(rows, key=lambda r: Decimal(r[0]))[0], result.stdout
