"""Azure's quotas against the loopback Resource Manager: Compute's usages read per region
through the Azure launcher's clients (each family's vCPUs, the region's, the low-priority
ones), a missing permission named in one line; a VM create refused for a quota becomes a
QuotaError naming the quota; the families match offerings whatever Azure's spelling."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from costsched.clouds.azure_sdk import AzureClients
from costsched.optimize.quotas import attach, over_quota
from launchers.base import QuotaError
from price_collectors.quota_reading import QuotasUnreadable
from price_collectors.quotas_azure import AzureQuotaReader
from tests.launchers.azure_fake import SUBSCRIPTION, Azure, StaticToken
from tests.launchers.test_azure import make, spec

AT = pd.Timestamp("2026-12-01 12:00", tz="UTC")


def usage(value: str, localized: str, limit: int, used: int) -> dict:
    return {"name": {"value": value, "localizedValue": localized}, "currentValue": used,
            "limit": limit, "unit": "Count"}


EASTUS = [usage("availabilitySets", "Availability Sets", 2500, 0),
          usage("cores", "Total Regional vCPUs", 20, 6),
          usage("virtualMachines", "Virtual Machines", 25000, 1),
          usage("lowPriorityCores", "Total Regional Low-priority vCPUs", 0, 0),
          usage("standardNCSv3Family", "Standard NCSv3 Family vCPUs", 12, 6),
          usage("StandardNCADSA100v4Family", "Standard NCADS_A100_v4 Family vCPUs", 0, 0)]


def reader(azure: Azure) -> AzureQuotaReader:
    return AzureQuotaReader(AzureClients(SUBSCRIPTION, StaticToken(), endpoint=azure.url,
                                         retry_total=0))


def test_the_usages_of_each_region_are_read(azure: Azure) -> None:
    azure.arm.usages["eastus"] = EASTUS
    reading = reader(azure).read(["eastus", "westus2"])
    got = {(r.scope, r.code): (r.name, r.limit, r.used) for r in reading.rows.itertuples()}
    assert got == {
        ("eastus", "cores"): ("Total Regional vCPUs", 20.0, 6.0),
        ("eastus", "lowPriorityCores"): ("Total Regional Low-priority vCPUs", 0.0, 0.0),
        ("eastus", "standardNCSv3Family"): ("Standard NCSv3 Family vCPUs", 12.0, 6.0),
        ("eastus", "StandardNCADSA100v4Family"): ("Standard NCADS_A100_v4 Family vCPUs",
                                                  0.0, 0.0)}
    assert reading.account == SUBSCRIPTION and reading.error == ""
    assert sorted(r.path.split("/")[-2] for r in azure.arm.calls("GET", "/usages")) == [
        "eastus", "westus2"]


def test_a_missing_permission_is_one_line_naming_it(azure: Azure) -> None:
    azure.arm.forbid.add("/usages")
    with pytest.raises(QuotasUnreadable) as caught:
        reader(azure).read(["eastus"])
    assert str(caught.value).startswith("azure: Microsoft.Compute/locations/usages/read is "
                                        f"not allowed in subscription {SUBSCRIPTION}")
    assert "costsched role" in caught.value.fix


def test_which_quota_holds_each_size_and_market(azure: Azure) -> None:
    azure.arm.usages["eastus"] = EASTUS
    rows = reader(azure).read(["eastus"]).rows
    facts = rows.assign(cloud="azure", account="", observed_at=AT, refused=float("nan"),
                        refused_at=pd.NaT, refused_detail="")
    sizes = pd.DataFrame([
        {"cloud": "azure", "region": "eastus", "zone": "", "instance_type": size,
         "market": market, "os": "linux", "gpu_model": gpu, "gpu_count": 1, "vcpus": vcpus,
         "excluded": ""}
        for size, market, gpu, vcpus in (
            ("Standard_NC6s_v3", "on_demand", "V100", 6),
            ("Standard_NC6s_v3", "spot", "V100", 6),
            ("Standard_NC12s_v3", "on_demand", "V100", 12),
            ("Standard_NC24ads_A100_v4", "on_demand", "A100-80GB", 24))])
    got = attach(sizes, facts)
    assert got["quota_code"].tolist() == ["standardNCSv3Family", "lowPriorityCores",
                                          "standardNCSv3Family", "StandardNCADSA100v4Family"]
    assert got["quota_instances"].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert over_quota(got).tolist()[1] == ("quota 0 of 6 vCPUs: request lowPriorityCores in "
                                           "eastus")


@pytest.mark.parametrize(("market", "message", "quota"), [
    ("on_demand", "Operation could not be completed as it results in exceeding approved "
                  "standardNCSv3Family Cores quota. Additional details - Deployment Model: "
                  "Resource Manager, Location: eastus, Current Limit: 0, Current Usage: 0, "
                  "Additional Required: 6, (Minimum) New Limit Required: 6.",
     "standardNCSv3Family"),
    ("spot", "Operation could not be completed as it results in exceeding approved "
             "LowPriorityCores quota. Location: eastus, Current Limit: 0, Current Usage: 0, "
             "Additional Required: 6.", "lowPriorityCores"),
])
def test_a_create_refused_for_a_quota_names_it(azure: Azure, tmp_path: Path, market: str,
                                               message: str, quota: str) -> None:
    from launchers.azure_vm import vm_name

    launcher = make(azure, tmp_path)
    asked = spec(market)
    azure.arm.refuse[vm_name(7, asked.attempt)] = (409, "OperationNotAllowed", message)
    with pytest.raises(QuotaError) as caught:
        launcher.launch(asked)
    assert caught.value.quota == quota and caught.value.instances == 1
    assert caught.value.reason.startswith("OperationNotAllowed: Operation could not be")
    assert azure.arm.vms() == []


def test_operation_not_allowed_without_quota_is_not_a_quota(azure: Azure,
                                                            tmp_path: Path) -> None:
    from launchers.azure_vm import vm_name

    launcher = make(azure, tmp_path)
    asked = spec()
    azure.arm.refuse[vm_name(7, asked.attempt)] = (409, "OperationNotAllowed",
                                                   "The VM size is not allowed here")
    with pytest.raises(Exception) as caught:  # noqa: PT011 - what it is not is the point
        launcher.launch(asked)
    assert not isinstance(caught.value, QuotaError)
