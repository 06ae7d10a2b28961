"""Charged figures at one precision (`amounts.CHARGED`: four decimals), whatever the
store's size and its smallest charge: every view writes a store of many finished jobs of
varied costs, the smallest under a ten-thousandth of a dollar's tenth, at those decimals,
every total is the sum of its rows as written, and money and hours alike."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest

from costsched.store import PriceStore
from tests.costsched.cli.test_store_scale_views import _dashboard, _run
from tests.costsched.test_costs import EAST_A, WEST, at, observe

JOBS = 30


def _many(tmp_path: Path) -> str:
    """JOBS finished jobs, each 37+13i s at $0.0243/h then 29+7i s at $0.9180/h (every
    fifth on two nodes): the smallest settled charge is $0.00024975 (37 s)."""
    db = str(tmp_path / "many.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0243)])
    observe(store, WEST, [(0, 0.9180)])
    for i in range(JOBS):
        spec = {"name": f"j{i}", "run": "true", "steps": 10,
                "num_nodes": 2 if i % 5 == 0 else 1,
                "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}}
        job = store.jobs.create(f"j{i}", {"spec": spec, "source": "t", "launcher": "local"},
                                10, at=at(1))
        store.jobs.transition(job, "running", at=at(1))
        store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(1),
                         usd_per_hour=0.0243, reason="launch", instance=f"{job}-1")
        moved = at(1) + timedelta(seconds=37 + 13 * i)
        store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=moved,
                         usd_per_hour=0.9180, reason="recovery", instance=f"{job}-2")
        end = moved + timedelta(seconds=29 + 7 * i)
        store.jobs.end_placement(job, end)
        store.jobs.transition(job, "stopped", at=end)
    store.dispose()
    return db


def _money(text: str) -> list[str]:
    return re.findall(r"\$[\d,]+\.(\d+)", text)


def _row(text: str, name: str) -> list[str]:
    return [c.strip() for c in next(line for line in text.splitlines()
                                    if f"│ {name} " in line).split("│")]


def _figure(cell: str) -> float:
    return float(cell.lstrip("$").replace(",", ""))


@pytest.fixture
def many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    for name in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / "home"))
    return _many(tmp_path)


def test_every_view_writes_four_decimals_whatever_the_smallest_charge(many: str) -> None:
    status = _run("status", "--db", many, "--no-reconcile")
    one = _run("status", "3", "--db", many, "--no-reconcile")
    report = _run("report", "--db", many)
    job = _run("report", "--db", many, "--job", "j7")
    page, jobs = _dashboard(many, "/jobs/3", "/")
    for text in (status, one, report, job):
        assert {len(c) for c in _money(text)} == {4}, text  # (prices per hour too)
    for text in (page, jobs):
        assert not re.search(r"\$[\d,]+\.\d{5,}<", text), text
        assert re.search(r">\$[\d,]+\.\d{4}<", text)


def test_a_job_reads_alike_in_status_report_and_the_dashboard(many: str) -> None:
    status = _run("status", "--db", many, "--no-reconcile")
    report = _run("report", "--db", many)
    [jobs] = _dashboard(many, "/")
    for i in range(JOBS):
        cost = next(c for c in _row(status, f"j{i}" + (" (2 nodes)" if i % 5 == 0 else ""))
                    if c.startswith("$"))
        row = _row(report, f"j{i}")
        assert cost in row, (cost, row)
        assert f">{cost}<" in jobs


def test_totals_are_the_sums_of_the_rows_as_written(many: str) -> None:
    report = _run("report", "--db", many)
    rows = [_row(report, f"j{i}") for i in range(JOBS)]
    spend = re.search(r"Spend \$([\d.]+) \(compute \$([\d.]+), egress \$([\d.]+)\) over "
                      r"([\d.]+) billed hours \(([\d.]+) instance-hours", report)
    assert spend, report
    total, compute, _, hours, instance = (float(v) for v in spend.groups())
    # job, name, state, nodes, billed hours, compute $, egress $, total $
    assert total == pytest.approx(sum(_figure(r[8]) for r in rows), abs=1e-12)
    assert compute == pytest.approx(sum(_figure(r[6]) for r in rows), abs=1e-12)
    assert hours == pytest.approx(sum(_figure(r[5]) for r in rows), abs=1e-12)
    assert instance == pytest.approx(sum(_figure(r[5]) * int(r[4]) for r in rows), abs=1e-12)
    assert len(spend.group(4).split(".")[1]) == 4  # hours at four decimals
    # The exact total rounded once differs from the rows' sum: said once, under the totals.
    assert report.count("sums of the rows as shown") == 1
    assert "--json" in report


def test_the_precision_does_not_grow_as_jobs_finish(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / "home"))
    from tests.costsched.cli.test_store_scale_views import _store, _tiny

    db, _ = _store(tmp_path)
    first = _run("status", "--db", db, "--no-reconcile")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0243)])
    _tiny(store, tmp_path, "again")
    store.dispose()
    second = _run("status", "--db", db, "--no-reconcile")
    assert "$0.0006" in _row(first, "tiny") and "$0.0006" in _row(second, "tiny")


def test_report_and_report_billed_read_the_same_figure_for_a_job(tmp_path: Path) -> None:
    from costsched.bills.imports import rematch
    from costsched.bills.lines import LINE_COLUMNS, finish
    from costsched.report.billed import build_billed
    from costsched.report.cells import shown_rows
    from costsched.report.data import build
    from costsched.store.bills import BillStore
    from tests.costsched.bills import scenario
    from tests.costsched.report.test_billed import _line

    store = PriceStore(str(tmp_path / "billed.sqlite"))
    scenario.fill(store)
    rows = [_line(scenario.T + h * scenario.H, 1, 0.918, resource="i-0aaa") for h in range(3)]
    BillStore(store.engine).replace("test", finish(pd.DataFrame(rows, columns=LINE_COLUMNS)),
                                    at=scenario.NOW)
    rematch(store, now=scenario.NOW)
    report = build(store, now=scenario.NOW)
    billed = build_billed(store, now=scenario.NOW, threshold=0.05)
    _, cells = shown_rows("jobs", report.tables())
    written = {r["job_id"]: c["usd"] for r, c in zip(report.rows["jobs"], cells, strict=True)}
    shown = billed.shown("jobs")
    assert len(shown)
    for job, estimated in zip(shown["job_id"], shown["estimated_usd"], strict=True):
        assert estimated == pytest.approx(written[job], abs=1e-12)
    totals = billed.shown_totals  # compared and not compared: the report's spend as written
    assert totals["estimated_usd"] + totals["not_covered_usd"] == pytest.approx(
        sum(written.values()), abs=1e-12)
    store.dispose()
