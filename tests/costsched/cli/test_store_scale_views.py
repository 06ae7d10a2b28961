"""One precision for charged figures (`costsched.amounts.CHARGED`), whatever the store: the
same job reads the same in `status`, `report` (text and HTML) and the dashboard's pages,
and at every call, whatever other jobs settle; a finished placement reads the same at every
`status` while another job's running placement grows; an itemised line adds up as written;
zero reads at the same decimals."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.amounts import CHARGED, Scale, total_as_written
from costsched.cli import app
from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
from costsched.service.jobs.caps import raise_budget
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, WEST, at, observe


def _tiny(store: PriceStore, tmp_path: Path, name: str = "tiny") -> int:
    """A job that ran 36 s on EAST_A ($0.000243) and 36 s on WEST ($0.000412), stopped:
    the store's smallest settled charge is $0.000243 over 0.01 h."""
    spec = {"name": name, "run": "true", "steps": 10,
            "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}}
    job = store.jobs.create(name, {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(1),
                     usd_per_hour=0.0243, reason="launch", instance=f"{job}-1")
    t = at(1) + timedelta(seconds=36)
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=t, usd_per_hour=0.0412,
                     reason="recovery", instance=f"{job}-2")
    store.jobs.end_placement(job, t + timedelta(seconds=36))
    store.jobs.transition(job, "stopped", at=t + timedelta(seconds=36))
    return job


def _store(tmp_path: Path) -> tuple[str, int]:
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0243)])
    observe(store, WEST, [(0, 0.0412)])
    job = _tiny(store, tmp_path)
    store.dispose()
    return db, job


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    return result.stdout


def _settle_tiny(db: str, tmp_path: Path) -> None:
    """Another job that ran 1 s at $0.0243/h and stopped: a settled charge of $0.0000068."""
    store = PriceStore(db)
    spec = {"name": "blip", "run": "true", "steps": 10,
            "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}}
    job = store.jobs.create("blip", {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(2))
    store.jobs.transition(job, "running", at=at(2))
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(2),
                     usd_per_hour=0.0243, reason="launch", instance=f"{job}-1")
    store.jobs.end_placement(job, at(2) + timedelta(seconds=1))
    store.jobs.transition(job, "stopped", at=at(2) + timedelta(seconds=1))
    store.dispose()


def test_a_job_s_figures_keep_their_decimals_when_another_settles_a_smaller_charge(
        tmp_path: Path) -> None:
    # The trial: every job's cost, and its budget's cap, went from 4 decimals to 5, then
    # 6, as other jobs settled smaller charges ('$5.0000', '$5.00000', '$5.000000').
    db, job = _store(tmp_path)
    store = PriceStore(db)
    raise_budget(store, job, 5.0, at=at(3))
    store.dispose()
    before = _run("status", "--db", db, "--no-reconcile")
    _settle_tiny(db, tmp_path)
    after = _run("status", "--db", db, "--no-reconcile")
    for text in (before, after):
        [row] = [line for line in text.splitlines() if "│ tiny" in line and "total" not in line]
        assert "$0.0006 " in row, text
        [budget] = [line for line in text.splitlines() if "(tiny)" in line]
        assert "$5.0000 " in budget and "$0.0006 " in budget, text
        assert (f"job {job}: placed at its launch on aws us-east-1a p3.2xlarge spot: billed "
                "0.0100 h x $0.0243/h = $0.0002") in text
    [blip] = [line for line in after.splitlines() if "│ blip" in line]
    assert "<$0.0001 " in blip, after
    assert Scale(4, 4) == CHARGED


def test_a_total_is_the_sum_of_its_parts_as_written() -> None:
    assert total_as_written([0.000243, 0.000412], 5) == pytest.approx(0.00065)
    assert total_as_written([0.0, 1e-7], 4) > 0  # a just-launched job is never zero


def test_the_same_job_reads_alike_in_status_report_and_html(
        tmp_path: Path) -> None:
    db, job = _store(tmp_path)
    status = _run("status", "--db", db, "--no-reconcile")
    report = _run("report", "--db", db)
    html_path = tmp_path / "report.html"
    _run("report", "--db", db, "--html", str(html_path))
    html = html_path.read_text()
    # At four decimals $0.0002 + $0.0004 = $0.0006 (its exact $0.000655 rounds once to
    # $0.0007): every view writes the sum of its rows as written.
    [row] = [line for line in status.splitlines() if "│ tiny" in line]
    assert "$0.0006 " in row, status  # $0.0002 + $0.0004, as written
    assert (f"job {job}: placed at its launch on aws us-east-1a p3.2xlarge spot: billed 0.0100 h "
            "x $0.0243/h = $0.0002") in status
    assert (f"job {job}: placed at its recovery on aws us-west-2b p3.2xlarge spot: billed "
            "0.0100 h x $0.0412/h = $0.0004") in status
    line = next(line for line in report.splitlines() if "│ tiny" in line)  # per job
    assert line.count("$0.0006 ") == 2 and "0.0200" in line, report  # compute and total
    assert "Spend $0.0006 (compute $0.0006, egress $0.0000)" in report, report
    assert "Spend $0.0006 (compute $0.0006, egress $0.0000)" in html
    for text in (status, report, html):
        assert "$0.00065" not in text and "$0.0007" not in text, text


def _dashboard(db: str, *paths: str) -> list[str]:
    pytest.importorskip("starlette", reason="the dashboard extra is not installed")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    store = PriceStore(db)
    client = TestClient(create_app(store))
    pages = [client.get(path).text for path in paths]
    store.dispose()
    return pages


def test_the_dashboards_job_and_spend_pages_read_the_job_as_status_does(
        tmp_path: Path) -> None:
    db, job = _store(tmp_path)
    page, spend = _dashboard(db, f"/jobs/{job}", "/spend")  # (the report's scale)
    for text in (page, spend):
        assert "$0.0006<" in text, text
        assert "$0.00065" not in text and "$0.0007" not in text
    assert ">$0.0002<" in page and ">$0.0004<" in page and ">0.0100<" in page


def test_the_dashboards_list_of_jobs_reads_the_job_as_status_does(tmp_path: Path) -> None:
    db, _ = _store(tmp_path)
    [jobs] = _dashboard(db, "/")
    status = _run("status", "--db", db, "--no-reconcile")
    [row] = [line for line in status.splitlines() if "│ tiny" in line]
    assert "$0.0006 " in row, status
    # The job's row and the card of what the jobs spent, as `status` writes the job.
    assert jobs.count(">$0.0006<") == 2 and "$0.00065" not in jobs, jobs


def _look(db: str, when: datetime, capsys: pytest.CaptureFixture[str]) -> str:
    store = PriceStore(db)
    shown = service.status(store, None, at=when, reconcile_first=False)
    capsys.readouterr()
    print_status(shown, json_out=False)
    store.dispose()
    return capsys.readouterr().out


def test_a_finished_placement_reads_alike_while_another_job_s_running_one_grows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The trial: '0.02 h' in one `status` and '0.0172 h' in the next, for a job that had
    # not changed, as another job's running placement changed the view's precision.
    db, job = _store(tmp_path)
    store = PriceStore(db)
    live = store.jobs.create("live", {"spec": {"name": "live", "run": "true"}, "source": "t",
                                      "launcher": "local"}, 10, at=at(1))
    store.jobs.transition(live, "running", at=at(1))
    store.jobs.place(live, EAST_A, gpu_model="V100", gpu_count=1, at=at(1),
                     usd_per_hour=0.0243, reason="launch", instance="l-9")
    store.dispose()
    # The running one at 8 s, then at 7 h: its figures grow, the finished ones stay.
    early = _look(db, at(1) + timedelta(seconds=8), capsys)
    late = _look(db, at(8), capsys)
    for out in (early, late):
        assert f"job {job}: placed at its launch on aws us-east-1a p3.2xlarge spot: billed " \
            "0.0100 h x $0.0243/h = $0.0002" \
            in out, out
        assert f"job {job}: placed at its recovery on aws us-west-2b p3.2xlarge spot: billed " \
            "0.0100 h x $0.0412/h = $0.0004" \
            in out, out
        [row] = [line for line in out.splitlines() if "│ tiny" in line]
        assert "$0.0006 " in row, out
    [early_live] = [line for line in early.splitlines() if "│ live" in line]
    [late_live] = [line for line in late.splitlines() if "│ live" in line]
    assert "$0.0001" in early_live and "$0.1701" in late_live, (early, late)


def test_an_itemised_line_adds_up_as_written(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    db, job = _store(tmp_path)
    out = _look(db, at(8), capsys)
    parts = [float(v) for v in re.findall(rf"job {job}: .* = \$([\d.]+)$", out, re.M)]
    [row] = [line for line in out.splitlines() if "│ tiny" in line]
    [cost] = re.findall(r"\$([\d.]+)", row)
    places = len(cost.split(".")[1])
    assert len(parts) == 2 and round(sum(parts), places) == float(cost), out
