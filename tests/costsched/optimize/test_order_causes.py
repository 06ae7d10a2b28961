"""Each `ordered:` alternative preferred to the one a plan goes to is named with why it is
passed over, numbered in the task's order (one dropped as the task was read keeps its
place): an accelerator the catalog has no type of, a cloud costsched does not run on, no
GPU type of its place, no price known for its shape in its market, its bucket's cloud, its
budget or deadline, the account's quota short of each, a launcher that does not start it.
A plan on the first alternative names none."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched import service
from costsched.cli.plan_json import job_notes
from costsched.optimize.planner import JobPlan, order_cost
from costsched.store import PriceStore

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
WHEN = "2026-11-01T00:00Z"
THEN_T4 = "    - {accelerators: T4:1}\n"


def _plan(tmp_path: Path, text: str, launcher: str | None = None) -> JobPlan:
    path = tmp_path / "task.yaml"
    path.write_text("name: ord\nrun: python train.py\n" + text)
    return service.plan(str(tmp_path / "s.sqlite"), str(path), at=NOW,
                        launcher=launcher).jobs[0]


CAUSES = {
    "price": ("resources:\n  ordered:\n    - {accelerators: A100:1, use_spot: true}\n"
              + THEN_T4, "A100:1 spot",
              rf"no spot price known as of {WHEN} for A100:1; on-demand: gcp "),
    "catalog": ("resources:\n  ordered:\n    - {accelerators: L40:1}\n" + THEN_T4, "",
                re.escape("resources.ordered[0].accelerators: L40:1 dropped: the catalog "
                          "has no instance type with it; did you mean 'L40S:1'?")),
    "cloud": ("resources:\n  ordered:\n    - {accelerators: A100:1, cloud: lambda}\n"
              + THEN_T4, "", re.escape("resources.ordered[0].cloud: 'lambda': costsched "
                                       "runs on aws, gcp, azure; `sky launch` runs on the "
                                       "others") + "$"),
    "place": ("resources:\n  ordered:\n    - {accelerators: A100:1, infra: aws/us-east-1}\n"
              + THEN_T4, "", re.escape("resources.ordered[0].accelerators: A100:1: no GPU "
                                       "instance type of the catalog on aws matches; on aws "
                                       "A100 comes as 8 GPUs")),
    "bucket": ("file_mounts:\n  /data: s3://my-bucket/data\nresources:\n  ordered:\n"
               "    - {accelerators: A100:1}\n" + THEN_T4, "A100:1 on-demand in aws",
               rf"no price known as of {WHEN} for A100:1 in aws; .*; not there because the "
               r"task's s3 bucket /data \(s3://my-bucket/data\) keeps it on aws"),
    "budget": ("costsched: {hours: 100, budget: 100}\nresources:\n  ordered:\n"
               "    - {accelerators: A100:1}\n" + THEN_T4, "A100:1 on-demand",
               r"its \d+ offerings? left out: \d+ over budget$"),
    "deadline": ("costsched: {hours: 100, deadline: 50h}\nresources:\n  ordered:\n"
                 + THEN_T4 + "    - {accelerators: A100:1}\n", "T4:1 on-demand",
                 r"its \d+ offerings? left out: \d+ misses deadline$"),
}


@pytest.mark.parametrize("cause", list(CAUSES))
def test_an_alternative_passed_over_is_named_with_its_cause(
        tmp_path: Path, cause: str) -> None:
    text, asked, why = CAUSES[cause]
    plan = _plan(tmp_path, text)
    assert plan.reason == ""
    [over] = plan.passed_over
    assert (over.alternative, over.taken) == (1, 2)
    assert over.asked.startswith(asked) and bool(over.asked) == bool(asked), over.asked
    assert re.search(why, over.cause), over.cause
    said = f" ({over.asked})" if asked else ""
    assert over.line() == (f"ordered: alternative 1{said}: {over.cause}; passed over: the "
                           "order holds for the rest (alternative 2 first)")
    assert int(plan.best["order_rank"]) == 1  # (from 0: the task's second)
    assert over.line() in job_notes(plan)


def test_alternatives_dropped_as_read_keep_their_place_in_the_order(tmp_path: Path) -> None:
    """The order is the user's preference: the lines follow it, each numbered as the file
    numbers it, and the alternative taken is the file's fourth; a dropped one's note is
    said once, in its line."""
    plan = _plan(tmp_path, "resources:\n  use_spot: true\n  ordered:\n"
                 "    - {accelerators: A100:1}\n    - {accelerators: A100:1, cloud: lambda}\n"
                 "    - {accelerators: L40:1}\n" + THEN_T4)
    assert [(o.alternative, o.taken) for o in plan.passed_over] == [(1, 4), (2, 4), (3, 4)]
    causes = [o.cause for o in plan.passed_over]
    assert causes[0].startswith("no spot price known as of ")
    assert causes[1].startswith("resources.ordered[1].cloud: 'lambda': ")
    assert causes[2].startswith("resources.ordered[2].accelerators: L40:1 dropped: ")
    assert order_cost(plan).startswith("ordered: alternative 4 (")
    notes = " ".join(job_notes(plan))
    assert notes.count("'lambda'") == 1 and notes.count("L40:1 dropped") == 1, notes


def test_an_alternative_over_the_accounts_quota_is_passed_over_for_it(tmp_path: Path) -> None:
    """Its offerings stay in the ranking, behind those the quota holds: the plan goes to
    the next alternative, and says why."""
    store = PriceStore(str(tmp_path / "s.sqlite"))
    store.quotas.record("aws", pd.DataFrame([{
        "scope": "us-east-1", "code": "L-417A185B", "name": "Running On-Demand P instances",
        "unit": "vCPUs", "limit": 0.0, "used": 0.0, "source": "test"}]),
        at=NOW - timedelta(hours=1))
    store.dispose()
    plan = _plan(tmp_path, "resources:\n  ordered:\n"
                 "    - {accelerators: V100:1, infra: aws/us-east-1}\n" + THEN_T4)
    [over] = plan.passed_over
    assert (over.alternative, over.taken) == (1, 2)
    assert over.cause == ("over quota: the account's quota holds none of its offerings (quota "
                          "0 of 8 vCPUs: request L-417A185B in us-east-1)")
    assert plan.best["gpu_model"] == "T4"


def test_an_alternative_the_launcher_does_not_start_is_passed_over_for_it(
        tmp_path: Path) -> None:
    """A100:1 comes on gcp alone: `launch` on the aws launcher goes to the V100s."""
    text = ("resources:\n  ordered:\n    - {accelerators: A100:1}\n"
            "    - {accelerators: V100:1, cloud: aws}\n")
    [over] = _plan(tmp_path, text, launcher="aws").passed_over
    assert (over.alternative, over.taken) == (1, 2)
    assert over.cause == "launch cannot start it: the aws launcher does not launch gcp offerings"
    assert _plan(tmp_path, text, launcher="local").passed_over == ()


def test_a_plan_on_the_first_alternative_passes_none_over(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "resources:\n  ordered:\n" + THEN_T4
                 + "    - {accelerators: L40:1}\n")
    assert int(plan.best["order_rank"]) == 0
    assert plan.passed_over == ()
    assert not any("passed over" in n for n in job_notes(plan))
    assert any("L40:1 dropped" in n for n in job_notes(plan))  # (its note is still said)
