"""`costsched collect`: summary, JSON, exit codes, one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import price_collectors.aws
from tests.price_collectors.aws_fake import FakeAws, always_failing
from tests.price_collectors.test_azure import EXPECTED


def test_collect_twice_json(cli, azure_prices) -> None:
    first = cli("collect", "--cloud", "azure", "--json")
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert summary["inserted"] == len(EXPECTED) and summary["ok"] is True
    azure = summary["clouds"]["azure"]
    assert azure["rejected"] == 2 and azure["failed"] == {}
    assert azure["rejected_by_reason"] == {"above ceiling": 1, "not positive": 1}
    assert azure["ignored"] == {"Windows meter": 2, "Low Priority meter": 1}
    second = json.loads(cli("collect", "--cloud", "azure", "--json").stdout)
    assert second["inserted"] == 0 and second["unchanged"] == len(EXPECTED)


def test_collect_prints_a_summary(cli, azure_prices) -> None:
    result = cli("collect", "--cloud", "azure", "--gpu", "T4")
    assert result.exit_code == 0, result.output
    assert "Collected prices" in result.stdout
    assert "Stored 5 new rows, 0 unchanged, 1 rejected" in result.stdout
    assert "not positive 1" in result.stdout


def test_failed_region_exit_code_and_message(cli, monkeypatch, recorded_spot) -> None:
    fake = FakeAws(spot={r: recorded_spot[r][:50] for r in ("us-east-1", "us-east-2")},
                   fault=always_failing("us-east-2"))
    clients = fake.clients()
    monkeypatch.setattr(price_collectors.aws, "AwsClients", lambda: clients)
    result = cli("collect", "--cloud", "aws", "--since", "2019-12-01")
    assert result.exit_code == 1
    assert "failed: aws us-east-2: Unavailable: injected Unavailable (after 9 retries)" in (
        result.output.replace("\n", " "))
    assert "partial" in result.stdout and "Traceback" not in result.output


def test_missing_credentials_is_one_line_not_a_traceback(cli, monkeypatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    result = cli("collect", "--cloud", "aws")
    assert result.exit_code == 1
    assert "error: aws: no AWS credentials found: run `aws configure`" in result.output
    assert "Traceback" not in result.output


def test_missing_sdk_is_one_line(cli, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # `import boto3` now raises ImportError
    result = cli("collect", "--cloud", "aws", "--json")
    assert result.exit_code == 1
    error = json.loads(result.stdout)["clouds"]["aws"]["error"]
    assert error == "aws: boto3 is not installed: pip install 'costsched[aws]'"


def test_bad_options_exit_2(cli) -> None:
    result = cli("collect", "--cloud", "ibm")
    assert result.exit_code == 2 and "--cloud 'ibm': expected one of aws, gcp, azure" in (
        result.output)
    result = cli("collect", "--cloud", "aws", "--region", "eastus")
    assert result.exit_code == 2 and "'eastus' is a region of azure" in result.output
    result = cli("collect", "--gpu", "Z80")
    assert result.exit_code == 2 and "unknown GPU model 'Z80'" in result.output


def test_verbose_logs_each_rejected_price(cli, azure_prices) -> None:
    result = cli("collect", "--cloud", "azure", "--gpu", "T4", "-v")
    assert result.exit_code == 0, result.output
    assert ("WARNING rejected azure southcentralus Standard_NC4as_T4_v3 spot 0.0: not positive"
            in result.output)


def test_collect_reads_the_quotas_of_the_regions_it_collected(cli, azure_prices,
                                                              monkeypatch) -> None:
    import pandas as pd

    import price_collectors.quotas
    from price_collectors.quota_reading import QuotaReading

    asked: list[list[str]] = []

    class Reader:
        def read(self, regions: list[str]) -> QuotaReading:
            asked.append(sorted(regions))
            return QuotaReading("azure", pd.DataFrame([
                {"scope": r, "code": "lowPriorityCores", "name": "Total Regional "
                 "Low-priority vCPUs", "unit": "vCPUs", "limit": 24.0, "used": 6.0,
                 "source": "test"} for r in regions]), account="sub-1")

    monkeypatch.setitem(price_collectors.quotas.READERS, "azure", lambda project: Reader())
    summary = json.loads(cli("collect", "--cloud", "azure", "--json").stdout)
    regions = summary["clouds"]["azure"]["regions"]
    assert asked == [sorted(regions)] and len(regions) > 1
    assert summary["quotas"] == {"azure": {"read": len(regions), "error": "", "fix": ""}}
    shown = json.loads(cli("quotas", "--json").stdout)
    assert {(q["scope"], q["free"]) for q in shown["quotas"]} == {(r, 18.0) for r in regions}
    assert all(q["account"] == "sub-1" for q in shown["quotas"])


def test_a_mistyped_region_of_the_cloud_named_gets_that_clouds_regions(cli) -> None:
    result = cli("collect", "--cloud", "aws", "--region", "us-est-1")
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert "--region 'us-est-1': not a region of aws: expected a name such as us-east-1" in said
    assert "'us-east-1'" in said and "'us-west1'" not in said  # gcp's: not asked for


def test_bad_options_are_refused_before_a_store_is_made_or_announced(
        tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from costsched.cli import app

    db = tmp_path / "new.sqlite"
    for bad in (["--cloud", "awss"], ["--cloud", "aws", "--region", "us-est-1"],
                ["--gpu", "Z80"], ["--since", "when"]):
        result = CliRunner().invoke(app, ["collect", *bad, "--db", str(db)])
        assert result.exit_code == 2, result.output
        [line] = result.stderr.splitlines()
        assert line.startswith("error: "), line
    assert [p for p in tmp_path.iterdir() if p.name != "user-dirs"] == []  # caches aside
