"""A "no plan" whose cause is a missing price gives the one line that gets it, whatever the
market and however little is known of the place: the `costsched collect` of the job's
cloud and region (run here as printed, against the collectors' fakes, it gets the job a
plan); where costsched's catalog lists the place's offerings and the job's GPU is not among
them, that it is not offered there and where it is; `launch` refuses the job with the same
words."""

from __future__ import annotations

import copy
import json
import re
import shlex
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import price_collectors.aws
from costsched.model import Constraints, Job
from costsched.optimize.job import Workload
from costsched.optimize.unmatched import unmatched
from costsched.throughput import ThroughputTable
from tests.costsched.cli.test_plan_no_offering import gcp_catalog  # noqa: F401 - a fixture
from tests.costsched.optimize.test_unmatched_scope import market
from tests.price_collectors.aws_fake import FakeAws
from tests.price_collectors.conftest import (  # noqa: F401 - fixtures by name
    azure_prices,
    hermetic_aws,
    loopback,
)

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\dZ")
COLLECT = re.compile(r"`costsched (collect [^`]+)` fetches today's prices")


def why(frame=None, **constraints: object) -> str:  # noqa: ANN001
    job = Workload(Job("j", "run", "ResNet-50 (batch size 64)", 20_000.0,
                       constraints=Constraints(**constraints)), ThroughputTable(), 0.5, 0.2)
    found = unmatched(job, market() if frame is None else frame, NOW, now=NOW)
    assert found is not None
    return found.line("j")


def spec(tmp_path: Path, cloud: str, region: str, gpu: str, market: str = "spot") -> Path:
    path = tmp_path / "job.yaml"
    path.write_text("name: j\nrun: 'true'\nsteps: 2000\nthroughputs: {" + gpu + ": 20}\n"
                    f"constraints: {{clouds: [{cloud}], regions: [{region}], "
                    f"gpu_models: [{gpu}], markets: [{market}]}}\n")
    return path


def said(result) -> str:  # noqa: ANN001
    """A command's output on one line, its times masked (a plan and a launch a minute
    apart say the same)."""
    return TIME.sub("TIME", " ".join(result.output.split()))


# --- the words -------------------------------------------------------------------------------


def test_a_region_with_no_price_at_all_gets_the_collect_of_its_cloud_and_region() -> None:
    line = why(clouds=("aws",), regions=("ap-south-1",), gpu_models=("A10G",),
               markets=("on_demand",))
    assert "has region ap-south-1" in line, line
    assert "; `costsched collect --cloud aws --region ap-south-1 --gpu A10G` fetches " \
        "today's prices, spot and on-demand; change constraints.regions" in line, line
    # the region's cloud, where the job names none
    assert "`costsched collect --cloud azure --region japaneast --gpu T4`" in why(
        regions=("japaneast",), gpu_models=("T4",))


def test_a_region_of_another_cloud_or_a_misspelt_one_gets_no_collect() -> None:
    assert "costsched collect" not in why(clouds=("aws",), regions=("japaneast",),
                                          gpu_models=("T4",))
    line = why(clouds=("aws",), regions=("us-east-l",), gpu_models=("A10G",))
    assert "costsched collect" not in line and "did you mean 'us-east-1'" in line, line


def test_a_gpu_the_catalog_does_not_list_in_a_region_it_lists_is_said_not_offered_there(
        ) -> None:
    """aws us-west-1 has list prices (H100, T4), none of A10G: a collect there would fetch
    none, so the line says it is not offered there, and where it is."""
    line = why(clouds=("aws",), regions=("us-west-1",), gpu_models=("A10G",),
               markets=("spot",))
    assert "; A10G is not offered in aws us-west-1: costsched's catalog lists it on aws in " \
        "us-east-1, us-east-2, us-west-2, eu-west-1, eu-central-1, ap-northeast-1; change " \
        "constraints.regions" in line, line
    assert "costsched collect" not in line, line
    assert "; none of A10G, L4 is offered in aws us-west-1: costsched's catalog lists them " \
        "on aws in us-east-1, " in why(clouds=("aws",), regions=("us-west-1",),
                                       gpu_models=("A10G", "L4"), markets=("spot",))


def test_a_region_it_is_offered_in_gets_the_collect_even_with_no_price_there() -> None:
    """The catalog lists A10G in us-east-2 (not in this frame): its prices are collected."""
    line = why(clouds=("aws",), regions=("us-east-2",), gpu_models=("A10G",),
               markets=("spot",), frame=market().query("region != 'us-east-2'"))
    assert "; `costsched collect --cloud aws --region us-east-2 --gpu A10G` fetches" in line


def test_a_market_with_no_price_at_all_gets_the_collect_as_a_booked_one_does() -> None:
    frame = market()
    line = why(frame[frame["market"] != "spot"], clouds=("aws",), regions=("us-east-1",),
               gpu_models=("A10G",), markets=("spot",))
    assert "has market spot; priced: on-demand" in line, line
    assert "; `costsched collect --cloud aws --region us-east-1 --gpu A10G` fetches " \
        "today's prices, spot and on-demand; change constraints.markets" in line, line


def test_a_plan_of_the_past_gets_no_line() -> None:
    job = Workload(Job("j", "run", "ResNet-50 (batch size 64)", 20_000.0, constraints=(
        Constraints(clouds=("aws",), regions=("ap-south-1",), gpu_models=("A10G",)))),
        ThroughputTable(), 0.5, 0.2)
    found = unmatched(job, market(), NOW - timedelta(days=30), now=NOW)
    assert found is not None and "costsched collect" not in found.line("j")


# --- the line, run as printed ------------------------------------------------------------------


def _spot(region: str, instance_type: str, price: str) -> dict:
    stamp = (datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return {"InstanceType": instance_type, "ProductDescription": "Linux/UNIX",
            "SpotPrice": price, "Timestamp": stamp, "AvailabilityZone": f"{region}a"}


@pytest.mark.parametrize("region", ["ap-south-1", "us-east-2"])
def test_the_aws_collect_line_run_as_printed_gets_the_job_a_plan(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hermetic_aws, region: str,  # noqa: F811
        ) -> None:
    """A region no price is known in (ap-south-1), and one with A10G's on-demand list
    prices but no spot price (us-east-2): the line's collect, with AWS answered here,
    stores the spot price the plan then takes; `launch` refused with the same line."""
    path = spec(tmp_path, "aws", region, "A10G")
    refused = cli("plan", str(path))
    assert refused.exit_code != 0, refused.output
    line = said(refused)
    found = COLLECT.search(line)
    assert found, line
    assert shlex.split(found[1]) == ["collect", "--cloud", "aws", "--region", region,
                                     "--gpu", "A10G"]
    launched = cli("launch", str(path))
    assert launched.exit_code != 0 and line.split("no plan: ", 1)[1] in said(launched), \
        said(launched)
    clients = FakeAws(spot={region: [_spot(region, "g5.xlarge", "0.4100")]}).clients()
    monkeypatch.setattr(price_collectors.aws, "AwsClients", lambda: clients)
    collected = cli(*shlex.split(found[1]), "--json")
    assert collected.exit_code == 0, collected.output
    assert json.loads(collected.stdout)["inserted"] >= 1
    planned = cli("plan", str(path))
    assert planned.exit_code == 0, planned.output
    assert f"{region}" in planned.stdout and "g5.xlarge" in planned.stdout, planned.stdout


def test_the_azure_collect_line_run_as_printed_gets_the_job_a_plan(
        cli, tmp_path: Path, azure_prices) -> None:  # noqa: F811
    """Azure's japaneast, where no price is bundled: the line's collect, against the
    loopback Retail Prices API (which prices T4 there), stores the price the plan takes."""
    for item in [i for i in azure_prices.items if i["armSkuName"] == "Standard_NC8as_T4_v3"
                 and i["retailPrice"] > 0]:
        azure_prices.items.append({**copy.deepcopy(item), "armRegionName": "japaneast",
                                   "location": "JA East"})
    path = spec(tmp_path, "azure", "japaneast", "T4")
    line = said(cli("plan", str(path)))
    found = COLLECT.search(line)
    assert found, line
    assert shlex.split(found[1]) == ["collect", "--cloud", "azure", "--region", "japaneast",
                                     "--gpu", "T4"]
    collected = cli(*shlex.split(found[1]), "--json")
    assert collected.exit_code == 0, collected.output
    planned = cli("plan", str(path))
    assert planned.exit_code == 0, planned.output
    assert "japaneast" in planned.stdout and "Standard_NC8as_T4_v3" in planned.stdout


def test_the_gcp_collect_line_run_as_printed_gets_the_job_a_plan(
        cli, tmp_path: Path, gcp_catalog) -> None:  # noqa: ANN001, F811
    """GCP's us-west3, where no price is bundled: the line's collect, against the loopback
    GCP APIs (which sell A100 in a zone of us-west3 and price it there as in
    us-central1), stores the price the plan takes."""
    zones = gcp_catalog.accelerators["items"]
    [a100] = [copy.deepcopy(a) for a in zones["zones/us-central1-a"]["acceleratorTypes"]
              if a["name"] == "nvidia-tesla-a100"]
    a100.update(zone=a100["zone"].replace("us-central1-a", "us-west3-b"),
                selfLink=a100["selfLink"].replace("us-central1-a", "us-west3-b"))
    zones["zones/us-west3-b"] = {"acceleratorTypes": [a100]}
    for sku in gcp_catalog.skus:  # priced in us-west3 as in us-central1
        if "us-central1" in sku.get("serviceRegions", []):
            sku["serviceRegions"] = [*sku["serviceRegions"], "us-west3"]
    path = spec(tmp_path, "gcp", "us-west3", "A100")
    line = said(cli("plan", str(path)))
    assert "has region us-west3" in line, line
    found = COLLECT.search(line)
    assert found, line
    assert shlex.split(found[1]) == ["collect", "--cloud", "gcp", "--region", "us-west3",
                                     "--gpu", "A100"]
    collected = cli(*shlex.split(found[1]))
    assert collected.exit_code == 0, collected.output
    planned = cli("plan", str(path))
    assert planned.exit_code == 0, collected.output + planned.output
    assert "us-west3" in planned.stdout and "a2-highgpu-1g" in planned.stdout, planned.stdout


def test_a_gpu_no_offering_has_gets_the_line_that_gets_its_price_or_its_types() -> None:
    """A GPU costsched knows with no price: the collect where the catalog has its types on
    the job's clouds, else the catalog refresh that finds them first."""
    assert "`costsched collect --cloud aws --gpu H100` fetches" in why(
        clouds=("aws",), gpu_models=("H100",))
    assert "costsched's catalog has no instance type with A10 in aws (`costsched catalog " \
        "refresh --cloud aws` finds new GPU instance types; `costsched collect --cloud aws " \
        "--gpu A10` then fetches their prices)" in why(clouds=("aws",), gpu_models=("A10",))
