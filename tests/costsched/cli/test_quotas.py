"""Quotas through the command line, end to end: an account whose spot P quota is 0 vCPUs in
us-east-1 and 96 in us-west-2 (Service Quotas through botocore's Stubber fed the
documented bodies, EC2 from moto): `quotas --refresh` reads them, the plan of a spot V100
job ranks us-east-1 behind us-west-2 and says which quota to ask for, `launch` starts it in
us-west-2 and never tries us-east-1; `check --json` lists what was read with its age, and a
missing permission is one line naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from costsched.model import Offering, PriceObservation
from costsched.store import PriceStore
from tests.conftest import hermetic_aws_env, moto_regions
from tests.price_collectors.quota_fakes import StubbedSession, documented

TASK = """\
name: spot-v100
resources:
  infra: aws
  accelerators: V100:1
  use_spot: true
  image_id: ami-12c6146b
run: python train.py
"""
EAST = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1, 8, 61.0)
WEST = Offering("aws", "us-west-2", "us-west-2a", "p3.2xlarge", "spot", "V100", 1, 8, 61.0)
BLOCKED = "quota 0 of 8 vCPUs: request L-7212CCBC in us-east-1"


def priced_task(db_path: Path, tmp_path: Path) -> Path:
    """TASK in a file, its two zones' spot prices stored half an hour ago."""
    store = PriceStore(str(db_path))
    now = datetime.now(timezone.utc) - timedelta(minutes=30)
    store.ingest([PriceObservation(EAST, 0.92, now, "test"),
                  PriceObservation(WEST, 1.23, now, "test")])
    store.dispose()
    path = tmp_path / "spot-v100.yaml"
    path.write_text(TASK)
    return path


@pytest.fixture()
def account(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, db_path: Path) -> Iterator[Path]:
    """Moto's EC2, the documented Service Quotas of a new account with the spot P quota
    raised to 96 vCPUs in us-west-2, and spot prices cheaper in us-east-1; the job's file."""
    hermetic_aws_env(monkeypatch, tmp_path)
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    moto_regions(monkeypatch)  # the account's regions: the two priced
    with mock_aws():
        session = StubbedSession({r: documented(r) for r in ("us-east-1", "us-west-2")})
        monkeypatch.setattr("price_collectors.quotas_aws._default_session", lambda: session)
        path = priced_task(db_path, tmp_path)
        yield path


def test_plan_and_launch_go_where_the_quota_holds(cli, account: Path,  # noqa: ANN001
                                                   db_path: Path) -> None:
    assert cli("quotas").stdout.startswith("No quotas read yet; `costsched quotas --refresh` "
                                           "reads them")
    read = cli("quotas", "--refresh", "--cloud", "aws", "--region", "us-east-1,us-west-2")
    assert read.exit_code == 0, read.output
    assert "All P Spot Instance Requests (L-7212CCBC)" in read.stdout
    assert "quotas at 0 not shown" in read.stdout

    planned = cli("plan", account)
    assert planned.exit_code == 0, planned.output
    lines = planned.stdout.splitlines()
    first = next(line for line in lines if "p3.2xlarge spot" in line)
    assert "aws us-west-2a p3.2xlarge spot" in first and "over quota" not in first
    assert any("aws us-east-1a p3.2xlarge spot (over quota)" in line for line in lines)
    assert f"over quota: aws us-east-1a p3.2xlarge spot: {BLOCKED}" in planned.stdout
    [paid] = [line.strip() for line in lines if "quota cost:" in line]
    assert paid.startswith("quota cost: $") and paid.endswith(
        "more (+$0.3100/h) on aws us-west-2a p3.2xlarge spot than on aws us-east-1a "
        f"p3.2xlarge spot, which the quota does not hold ({BLOCKED})")
    doc = json.loads(cli("plan", account, "--json").stdout)
    cost = doc["rankings"][0]["quota_cost"]
    assert (cost["chosen"], cost["blocked"], cost["quota"], cost["usd_per_hour"]) == (
        "aws us-west-2a p3.2xlarge spot", "aws us-east-1a p3.2xlarge spot", BLOCKED, 0.31)
    assert cost["usd"] > 0 and f"${cost['usd']:,.2f} more" in paid
    ranking = doc["rankings"][0]["ranking"]
    assert [(r["region"], r["quota"]) for r in ranking[:2]] == [("us-west-2", ""),
                                                                ("us-east-1", BLOCKED)]
    assert ranking[1]["quota_name"] == "All P Spot Instance Requests"
    assert (ranking[0]["quota_limit"], ranking[0]["quota_instances"]) == (96.0, 12.0)
    assert doc["quota_note"] is None  # every cloud of the prices has its quotas known

    launched = cli("launch", account, "--launcher", "aws", "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    where = job["placement"]
    assert (where["region"], where["zone"], where["market"]) == ("us-west-2", "us-west-2a",
                                                                 "spot"), job
    for region, count in (("us-west-2", 1), ("us-east-1", 0)):
        found = boto3.client("ec2", region_name=region).describe_instances()["Reservations"]
        assert sum(len(r["Instances"]) for r in found) == count, region
    # us-east-1 is tried, if ever, after every offering that fits.
    store = PriceStore(str(db_path))
    [move] = store.moves.of_job(job["id"])
    # The job's log keeps what the quota cost its launch.
    [planned_line] = [d for d in store.jobs.events(job["id"])["detail"]
                      if "(launch) planned" in d]
    store.dispose()
    assert planned_line.endswith(f"; {paid}"), planned_line
    regions = [c["key"][1] for c in move.candidates]
    assert move.tried == 0 and regions == sorted(regions, key=lambda r: r == "us-east-1")
    assert regions[0] == "us-west-2"


def probes_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """`check`'s calls to the clouds (their own tests ask them): what it reads of the
    store is asked here."""
    from costsched.service import check as checks

    for cloud in ("aws", "gcp", "azure"):
        monkeypatch.setattr(checks, f"check_{cloud}",
                            lambda cloud=cloud: checks.CloudCheck(cloud, True, launch=True))


def test_check_lists_the_quotas_read_with_their_age(cli, account: Path,  # noqa: ANN001
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    probes_answer(monkeypatch)
    cli("quotas", "--refresh", "--cloud", "aws", "--region", "us-east-1,us-west-2")
    doc = json.loads(cli("check", "--json").stdout)
    read = {(q["cloud"], q["scope"], q["code"]): q for q in doc["quotas"]["read"]}
    east = read[("aws", "us-east-1", "L-7212CCBC")]
    assert (east["limit"], east["used"], east["name"]) == (0.0, 0.0,
                                                           "All P Spot Instance Requests")
    assert 0 <= east["age_hours"] < 1 and east["observed_at"]
    assert read[("aws", "us-west-2", "L-7212CCBC")]["limit"] == 96.0
    assert ("aws", "us-east-1", "L-1216C47A") not in read  # a standard family: not a GPU's
    assert [(r["cloud"], r["quotas"], r["error"]) for r in doc["quotas"]["reads"]] == [
        ("aws", 24, "")]


def test_a_missing_permission_is_one_line_naming_it(cli, account: Path,  # noqa: ANN001
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    denied = StubbedSession({}, denied="AccessDeniedException")
    monkeypatch.setattr("price_collectors.quotas_aws._default_session", lambda: denied)
    read = cli("quotas", "--refresh", "--cloud", "aws", "--region", "us-east-1")
    assert read.exit_code == 1
    [line] = [x for x in read.stderr.splitlines() if x.startswith("aws quotas")]
    assert line.startswith("aws quotas not read: servicequotas:ListServiceQuotas is not "
                           "allowed (AccessDeniedException)")
    assert "fix: allow servicequotas:ListServiceQuotas" in line
    probes_answer(monkeypatch)
    doc = json.loads(cli("check", "--json").stdout)
    [reads] = doc["quotas"]["reads"]
    assert "servicequotas:ListServiceQuotas is not allowed" in reads["error"]
    # The plan treats the offerings as fitting, and says so once.
    planned = cli("plan", account)
    assert planned.exit_code == 0 and "over quota" not in planned.stdout
    notes = [x for x in planned.stderr.splitlines() if x.startswith("note: quotas not known")]
    assert len(notes) == 1 and "servicequotas:ListServiceQuotas" in notes[0]
