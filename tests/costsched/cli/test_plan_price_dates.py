"""A plan table that mixes fresh and old prices says which row's price is old: a 'price
of' column gives the date of each price older than `prices.stale_after` ('-' for a newer
one), the note names it, and --json marks each row (`price_stale`). A table of fresh
prices, or of old ones of one date (the note says it), has no such column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.costsched.cli.test_stale_prices import JOB, db  # noqa: F401

NEWER = ("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,memory_gb,"
         "usd_per_hour,effective_at,source\n"
         "aws,us-east-1,us-east-1b,p3.2xlarge,spot,linux,V100,1,8,61.0,0.95,"
         "2026-03-01T00:00:00Z,test\n")


@pytest.fixture()
def mixed(cli, db: str, tmp_path: Path) -> str:  # noqa: ANN001, F811
    """The demo's prices of 2026-01-01, us-east-1b's of 2026-03-01."""
    newer = tmp_path / "newer.csv"
    newer.write_text(NEWER)
    assert cli("prices", "import", newer, "--new-store", "--db", db).exit_code == 0
    return db


def _rows(output: str) -> dict[str, list[str]]:
    """The table's cells by offering."""
    return {cells[1]: cells for line in output.splitlines() if line.startswith("│")
            and (cells := [c.strip() for c in line.strip("│").split("│")])[0].isdigit()}


def test_each_old_price_reads_its_date(cli, mixed: str,  # noqa: ANN001
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    result = cli("plan", JOB, "--at", "2026-03-02", "--top", "3", "--db", mixed)
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if "offering" in line)
    columns = [c.strip() for c in header.strip("┃").split("┃")]
    assert columns[3:5] == ["$/h", "price of"], header
    rows = _rows(result.output)
    assert {o: cells[4] for o, cells in rows.items()} == {
        "aws us-east-1a p3.2xlarge spot": "2026-01-01",
        "aws us-east-1b p3.2xlarge spot": "-",
        "aws us-east-1c p3.2xlarge spot": "2026-01-01"}, result.output
    said = " ".join(result.output.split())
    assert ("2 of the 3 prices are older than 7 days (the oldest from 2026-01-01, 2 mo old), "
            "each one's date under 'price of': `costsched collect --cloud aws`") in said, said

    document = json.loads(cli("plan", JOB, "--at", "2026-03-02", "--top", "3", "--db",
                              mixed, "--json").stdout)
    ranking = document["rankings"][0]["ranking"]
    assert {r["offering"]: r["price_stale"] for r in ranking} == {
        "aws us-east-1a p3.2xlarge spot": True, "aws us-east-1b p3.2xlarge spot": False,
        "aws us-east-1c p3.2xlarge spot": True}


@pytest.mark.parametrize("at", ["2026-01-03", "2026-03-02"])
def test_no_column_where_the_rows_do_not_differ(cli, db: str, at: str,  # noqa: ANN001, F811
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Fresh prices (2026-01-03), or all of them old and of one date (2026-03-02)."""
    monkeypatch.setenv("COLUMNS", "160")
    result = cli("plan", JOB, "--at", at, "--top", "3", "--db", db)
    assert result.exit_code == 0, result.output
    assert "price of" not in result.output, result.output
    document = json.loads(cli("plan", JOB, "--at", at, "--top", "3", "--db", db,
                              "--json").stdout)
    stale = at != "2026-01-03"
    assert [r["price_stale"] for r in document["rankings"][0]["ranking"]] == [stale] * 3
