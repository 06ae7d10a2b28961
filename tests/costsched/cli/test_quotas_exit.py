"""`costsched quotas --refresh` exits 1 when no cloud asked for could be read (each one's
line says why), 0 when at least one was: a cloud that cannot be read here (its SDK not
installed, no credentials) does not fail a reading of the others. (The tests' clouds are
never read: each reader fails, as one without its SDK does.)"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import price_collectors.quotas
from price_collectors.quota_reading import QuotaReading


class Reader:
    def read(self, regions: list[str]) -> QuotaReading:
        return QuotaReading("azure", pd.DataFrame([
            {"scope": "eastus", "code": "lowPriorityCores", "name": "Total Regional "
             "Low-priority vCPUs", "unit": "vCPUs", "limit": 24.0, "used": 6.0,
             "source": "test"}]), account="sub-1")


def test_no_cloud_read_exits_1(cli) -> None:  # noqa: ANN001
    result = cli("quotas", "--refresh")
    assert result.exit_code == 1, result.output
    lines = [x for x in result.stderr.splitlines() if "quotas not read" in x]
    assert [x.split(" ", 1)[0] for x in lines] == ["aws", "azure", "gcp"], result.output


def test_one_cloud_read_exits_0_and_the_others_say_why(
        cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setitem(price_collectors.quotas.READERS, "azure", lambda project: Reader())
    result = cli("quotas", "--refresh", "--json")
    assert result.exit_code == 0, result.output
    refreshed = json.loads(result.stdout)["refreshed"]
    assert refreshed["azure"]["read"] == 1 and not refreshed["azure"]["error"]
    assert refreshed["aws"]["error"] and refreshed["gcp"]["error"]
    said = cli("quotas", "--refresh")
    assert said.exit_code == 0, said.output
    assert [x.split(" ", 1)[0] for x in said.stderr.splitlines()
            if "quotas not read" in x] == ["aws", "gcp"], said.output


def test_the_one_cloud_asked_not_read_exits_1(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setitem(price_collectors.quotas.READERS, "azure", lambda project: Reader())
    assert cli("quotas", "--refresh", "--cloud", "azure").exit_code == 0
    result = cli("quotas", "--refresh", "--cloud", "aws")
    assert result.exit_code == 1, result.output
    # as last read: aws's failed, azure's was read; asked for aws alone, it is 1
    assert cli("quotas", "--cloud", "aws").exit_code == 1
    assert cli("quotas").exit_code == 0
