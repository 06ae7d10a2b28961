"""`report --billed`'s totals line reads against its tables: at no fewer decimals than the
figures it sums; with nothing to compare (no bills imported, or none covering the period),
it says so first, and how to import them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from costsched.cli import bills
from costsched.cli.common import console
from costsched.report import billed
from costsched.report.billed import ITEMS, JOB_COLUMNS, UNMATCHED_COLUMNS, BilledReport
from tests.costsched.cli.test_store_scale_views import _run, _store


def _built() -> BilledReport:
    jobs = pd.DataFrame([
        {"job_id": 1, "name": "a", "estimated_usd": 0.0541, "billed_usd": 0.0641,
         "difference_usd": 0.01, "difference_share": 0.185, **dict.fromkeys(ITEMS, 0.0),
         "flagged": False},
        {"job_id": 2, "name": "b", "estimated_usd": 0.0071, "billed_usd": 0.0171,
         "difference_usd": 0.01, "difference_share": 1.41, **dict.fromkeys(ITEMS, 0.0),
         "flagged": False}], columns=JOB_COLUMNS)
    return BilledReport(since=None, until=pd.Timestamp("2026-01-02", tz="UTC"),
                        threshold=0.1, days=pd.DataFrame(), jobs=jobs,
                        unmatched=pd.DataFrame(columns=UNMATCHED_COLUMNS),
                        rates=pd.DataFrame())


def test_the_totals_line_reads_at_its_tables_precision(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(billed, "build_billed", lambda store, **_: _built())
    monkeypatch.setattr(bills, "using", lambda db: _Null())
    with console.capture() as captured:
        bills.print_billed(None, since=None, until=None, job=None, json_out=False)
    out = captured.get()
    assert "$0.0541" in out and "$0.0071" in out  # the jobs' table
    # Its totals need only cents alone ($0.06, $0.08): beside the table, its decimals.
    assert "estimated $0.0612, billed $0.0812, difference $0.0200" in out


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


def test_the_totals_read_at_the_reports_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beside a report whose charges read at five decimals, the billed totals read so too:
    never '$0.00 estimated' nor '$0.01 estimated on days no imported export covers'."""
    from costsched.amounts import Scale

    jobs = pd.DataFrame(columns=JOB_COLUMNS)
    built = BilledReport(since=None, until=pd.Timestamp("2026-01-02", tz="UTC"),
                         threshold=0.1, days=pd.DataFrame(), jobs=jobs,
                         unmatched=pd.DataFrame(columns=UNMATCHED_COLUMNS),
                         rates=pd.DataFrame(), not_covered_usd=0.006512, scale=Scale(5, 2))
    monkeypatch.setattr(billed, "build_billed", lambda store, **_: built)
    monkeypatch.setattr(bills, "using", lambda db: _Null())
    with console.capture() as captured:
        bills.print_billed(None, since=None, until=None, job=None, json_out=False)
    out = captured.get()
    assert "not compared: $0.00651 estimated on days" in out, out


def test_with_no_bills_it_says_first_that_nothing_was_compared(tmp_path: Path) -> None:
    # The trial: 'estimated $0.00, billed $0.00, difference $0.00; 0 jobs flagged', then
    # 'not compared: $0.12 estimated on days no imported export covers'.
    db, _ = _store(tmp_path)
    out = _run("report", "--billed", "--db", db)
    report = _run("report", "--db", db)
    lines = out.splitlines()
    assert lines[1] == ("nothing compared: no bills are imported; `costsched bills import` "
                        "imports the clouds' exports"), out
    assert lines[2] == "not compared: $0.0006 estimated on days no imported export covers", out
    assert "Spend $0.0006 " in report, report  # the same spend, as the report writes it
    assert "estimated $0" not in out and "difference" not in out, out
