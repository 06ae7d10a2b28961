"""One scale per store for charged figures (`costsched.amounts.store_scale`): the same job
reads the same in `status`, `report` (text and HTML) and the dashboard's pages; a finished
placement reads the same at every `status` while another job's running placement grows;
an itemised line adds up as written; zero reads at the scale's decimals."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.amounts import Scale, store_scale, total_as_written
from costsched.cli import app
from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
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


def test_the_scale_is_the_smallest_settled_charge_s_and_running_ones_do_not_set_it(
        tmp_path: Path) -> None:
    db, _ = _store(tmp_path)
    store = PriceStore(db)
    usd, hours = store.jobs.smallest_settled()
    assert usd == pytest.approx(0.000243) and hours == pytest.approx(0.01)
    assert store_scale(usd, hours) == Scale(5, 2)  # '$0.00024', '0.01'
    observe(store, EAST_A, [(0, 0.0243)])
    job = store.jobs.create("live", {"spec": {"name": "live", "run": "true"}, "source": "t",
                                     "launcher": "local"}, 10, at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(2),
                     usd_per_hour=0.0000001, reason="launch", instance="l-9")
    assert store.jobs.smallest_settled() == (usd, hours)  # it runs: no settled charge
    store.dispose()
    assert store_scale(None, None) == Scale(4, 4)  # none settled yet: '<$0.0001'
    assert store_scale(12.5, 3.0) == Scale(2, 2)
    # Under a dime, cents would lose a tenth of it or more.
    assert store_scale(0.0397, 0.012) == Scale(4, 2)  # '$0.0397', never '$0.04'
    assert store_scale(0.25, 0.5) == Scale(2, 2)


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
    # At the store's five decimals $0.00024 + $0.00041 = $0.00065 (its exact $0.000655
    # rounds once to $0.00066): every view writes the sum of its rows as written, at five.
    [row] = [line for line in status.splitlines() if "│ tiny" in line]
    assert "$0.00065 " in row, status  # $0.00024 + $0.00041, as written
    assert (f"job {job}: placed at its launch on aws us-east-1a p3.2xlarge spot: billed 0.01 h "
            "x $0.0243/h = $0.00024") in status
    assert (f"job {job}: placed at its recovery on aws us-west-2b p3.2xlarge spot: billed "
            "0.01 h x $0.0412/h = $0.00041") in status
    line = next(line for line in report.splitlines() if "│ tiny" in line)  # per job
    assert line.count("$0.00065 ") == 2 and "0.02" in line, report  # compute and total
    assert "Spend $0.00065 (compute $0.00065, egress $0.00000)" in report, report
    assert "Spend $0.00065 (compute $0.00065, egress $0.00000)" in html
    for text in (status, report, html):
        assert "$0.000655" not in text and "$0.00066" not in text and "$0.0006<" not in text


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
        assert "$0.00065<" in text, text
        assert "$0.000655" not in text and "$0.00066" not in text
    assert ">$0.00024<" in page and ">$0.00041<" in page and ">0.01<" in page


def test_the_dashboards_list_of_jobs_reads_the_job_as_status_does(tmp_path: Path) -> None:
    db, _ = _store(tmp_path)
    [jobs] = _dashboard(db, "/")
    status = _run("status", "--db", db, "--no-reconcile")
    [row] = [line for line in status.splitlines() if "│ tiny" in line]
    assert "$0.00065 " in row, status
    # The job's row and the card of what the jobs spent, as `status` writes the job.
    assert jobs.count(">$0.00065<") == 2 and "$0.000655" not in jobs, jobs


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
            "0.01 h x $0.0243/h = $0.00024" \
            in out, out
        assert f"job {job}: placed at its recovery on aws us-west-2b p3.2xlarge spot: billed " \
            "0.01 h x $0.0412/h = $0.00041" \
            in out, out
        [row] = [line for line in out.splitlines() if "│ tiny" in line]
        assert "$0.00065" in row, out
    [early_live] = [line for line in early.splitlines() if "│ live" in line]
    [late_live] = [line for line in late.splitlines() if "│ live" in line]
    assert "$0.00005" in early_live and "$0.17010" in late_live, (early, late)


def test_an_itemised_line_adds_up_as_written(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    db, job = _store(tmp_path)
    out = _look(db, at(8), capsys)
    parts = [float(v) for v in re.findall(rf"job {job}: .* = \$([\d.]+)$", out, re.M)]
    [row] = [line for line in out.splitlines() if "│ tiny" in line]
    [cost] = re.findall(r"\$([\d.]+)", row)
    places = len(cost.split(".")[1])
    assert len(parts) == 2 and round(sum(parts), places) == float(cost), out
