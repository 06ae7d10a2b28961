"""`report --billed`'s figures: shares of an account's charges, the rounding rule, the flag,
other currencies and days no export covers, worked out by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from costsched.bills.imports import rematch
from costsched.bills.lines import LINE_COLUMNS, finish
from costsched.report.billed import build_billed
from costsched.store import PriceStore
from costsched.store.bills import BillStore
from tests.costsched.bills import scenario

T, H = scenario.T, scenario.H


def _line(start, hours: float, usd: float, *, category: str = "compute",  # noqa: ANN001
          resource: str = "", currency: str = "USD", cloud: str = "aws") -> dict:
    return {"cloud": cloud, "account": "111", "source": "test", "line_key": "",
            "usage_start": pd.Timestamp(start), "usage_end": pd.Timestamp(start + hours * H),
            "resource_id": resource, "category": category, "line_type": "", "service": "",
            "usage_type": "SpotUsage:p3.2xlarge", "region": "us-east-1", "usage_amount": 1.0,
            "usage_unit": "Hrs", "usd": usd, "currency": currency, "job_tag": "",
            "attempt_tag": ""}


def _store_lines(store: PriceStore, rows: list[dict]) -> None:
    BillStore(store.engine).replace("test", finish(pd.DataFrame(rows, columns=LINE_COLUMNS)),
                                    at=scenario.NOW)
    rematch(store, now=scenario.NOW)


def _second_aws_job(store: PriceStore) -> int:
    job = store.jobs.create("b-job", {"spec": {"name": "b-job"}, "source": "test"}, 1e6,
                            at=T - H)
    store.jobs.place(job, scenario.AWS, gpu_model="V100", gpu_count=1, at=T,
                     usd_per_hour=1, reason="launch", instance="us-east-1/i-0bbb")
    store.jobs.end_placement(job, T + 3 * H)
    return job


def test_an_account_credit_is_shared_by_the_jobs_usage(store: PriceStore) -> None:
    scenario.fill(store)
    _second_aws_job(store)  # both AWS jobs: 3 h at 0.918 each
    rows = [_line(T + h * H, 1, 0.918, resource=i) for h in range(3)
            for i in ("i-0aaa", "i-0bbb")]
    rows.append(_line(T, 1, 2.754, resource="i-someone-else"))  # another workload's
    rows.append(_line(T, 3, -1.1016, category="credit"))  # the account's credit: no resource
    _store_lines(store, rows)
    report = build_billed(store, now=scenario.NOW, threshold=0.05)
    jobs = report.jobs.set_index("name")
    # Usage over the credit's hours: 2.754 each job, 2.754 the other workload: a third each.
    for name in ("aws-job", "b-job"):
        assert jobs.loc[name, "credits_usd"] == pytest.approx(-1.1016 / 3)
        assert jobs.loc[name, "billed_usd"] == pytest.approx(2.754 - 1.1016 / 3)
        assert jobs.loc[name, "difference_usd"] == pytest.approx(-1.1016 / 3)
        assert jobs.loc[name, "flagged"]  # 13% under the estimate
    unmatched = report.unmatched.set_index("category")
    assert unmatched.loc["credit", "usd"] == pytest.approx(-1.1016 / 3)
    assert unmatched.loc["compute", "usd"] == pytest.approx(2.754)


def test_cents_of_rounding_are_rounding_and_the_flag_takes_the_threshold(store: PriceStore
                                                                          ) -> None:
    scenario.fill(store)
    # Three hourly lines rounded to the cent: 0.92 each for 0.918 (0.006 over, under the
    # 0.015 three lines can make); the GCP job billed 4.3 for 4.0 estimated.
    rows = [_line(T + h * H, 1, 0.92, resource="i-0aaa") for h in range(3)]
    rows += [_line(T + h * H, 1, 2.15, resource=scenario.GCP_NAME, cloud="gcp")
             for h in range(2)]
    _store_lines(store, rows)
    report = build_billed(store, now=scenario.NOW, threshold=0.05)
    jobs = report.jobs.set_index("name")
    assert jobs.loc["aws-job", "rounding_usd"] == pytest.approx(0.006)
    assert jobs.loc["aws-job", "compute_usd"] == 0.0
    assert not jobs.loc["aws-job", "flagged"]
    assert jobs.loc["gcp-job", "compute_usd"] == pytest.approx(0.3)
    assert jobs.loc["gcp-job", "difference_share"] == pytest.approx(0.075)
    assert jobs.loc["gcp-job", "flagged"]
    assert not build_billed(store, now=scenario.NOW, threshold=0.1).jobs.set_index(
        "name").loc["gcp-job", "flagged"]


def test_other_currencies_and_days_no_export_covers_are_counted_not_compared(
        store: PriceStore) -> None:
    scenario.fill(store)
    rows = [_line(T + h * H, 1, 0.918, resource="i-0aaa") for h in range(3)]
    rows.append(_line(T, 1, 0.5, resource="i-0aaa", currency="EUR"))
    _store_lines(store, rows)
    report = build_billed(store, now=scenario.NOW, threshold=0.05)
    assert report.jobs["name"].tolist() == ["aws-job"]  # GCP's bill is not imported
    assert report.jobs["billed_usd"].iloc[0] == pytest.approx(2.754)
    assert report.totals["not_covered_usd"] == pytest.approx(4.0)
    assert report.totals["other_currency_lines"] == 1
    later = T + 5 * H  # after both jobs ended: nothing estimated, nothing billed
    assert build_billed(store, since=later, until=later + H, now=scenario.NOW,
                        threshold=0.05).jobs.empty
