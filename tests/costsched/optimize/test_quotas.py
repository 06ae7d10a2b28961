"""Whether the account's quotas hold an offering: the quota that binds it, per cloud's
mapping; a gang needing N times an instance's share; GCP's Spot VMs on the preemptible
quota where the project has one; a refusal counting until the next reading; unknown
quotas changing nothing. And the planner ranking offerings over quota behind those that
fit, marked with the request to make."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from costsched.clouds import azure, gcp, quotas
from costsched.optimize.quotas import (
    attach,
    behind_quota,
    blocked_keys,
    over_quota,
    quota_cost,
)

AT = pd.Timestamp("2026-12-01 12:00", tz="UTC")
NAN = math.nan


def quota(cloud: str, scope: str, code: str, limit: float, used: float = 0.0, *,
          refused: float | None = None, refused_at: pd.Timestamp | None = None,
          observed_at: pd.Timestamp | None = AT, name: str = "") -> dict:
    return {"cloud": cloud, "scope": scope, "code": code, "name": name, "unit": "vCPUs",
            "account": "", "limit": limit, "used": used, "observed_at": observed_at,
            "source": "test", "refused": NAN if refused is None else refused,
            "refused_at": refused_at if refused_at is not None else pd.NaT,
            "refused_detail": ""}


def offering(cloud: str, region: str, instance_type: str, market: str, gpu: str, count: int,
             vcpus: int, zone: str = "") -> dict:
    return {"cloud": cloud, "region": region, "zone": zone, "instance_type": instance_type,
            "market": market, "os": "linux", "gpu_model": gpu, "gpu_count": count,
            "vcpus": vcpus, "excluded": ""}


def frame(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def test_each_cloud_maps_an_instance_type_to_its_quotas() -> None:
    [p] = quotas.needs("aws", "us-east-1", "p3dn.24xlarge", "spot", "V100", 8, 96)
    assert (p.scope, p.codes, p.unit, p.amount, p.name) == (
        "us-east-1", ("L-7212CCBC",), "vCPUs", 96.0, "All P Spot Instance Requests")
    [g] = quotas.needs("aws", "us-east-1", "g4dn.xlarge", "on_demand", "T4", 1, 4)
    assert (g.codes, g.name) == (("L-DB2E81BA",), "Running On-Demand G and VT instances")
    assert quotas.needs("aws", "us-east-1", "trn1.2xlarge", "spot", "", 0, 8)[0].codes == (
        "L-6B0D517C",)
    assert quotas.needs("aws", "us-east-1", "x2idn.16xlarge", "spot", "", 0, 64) == ()
    assert quotas.needs("aws", "us-east-1", "p3.2xlarge", "spot", "V100", 1, 0) == ()
    regional, project, cpus = quotas.needs("gcp", "us-central1",
                                           "n1-standard-8+1xnvidia-tesla-v100", "spot",
                                           "V100", 1, 8)
    assert regional.codes == ("PREEMPTIBLE_NVIDIA_V100_GPUS", "NVIDIA_V100_GPUS")
    assert (project.scope, project.codes, project.amount) == (
        "global", ("GPUS_ALL_REGIONS",), 1.0)
    assert (cpus.codes, cpus.amount) == (("PREEMPTIBLE_CPUS", "CPUS"), 8.0)
    assert [n.codes for n in quotas.needs("gcp", "us-central1", "a2-ultragpu-1g",
                                          "on_demand", "A100-80GB", 1, 12)] == [
        ("NVIDIA_A100_80GB_GPUS",), ("GPUS_ALL_REGIONS",)]
    [spot] = quotas.needs("azure", "eastus", "Standard_NC6s_v3", "spot", "V100", 1, 6)
    assert spot.codes == ("lowPriorityCores",)
    total, family = quotas.needs("azure", "eastus", "Standard_NC6s_v3", "on_demand", "V100",
                                 1, 6)
    assert total.codes == ("cores",) and "standardNCSv3Family" in family.codes


@pytest.mark.parametrize(("size", "gpu", "family"), [
    ("Standard_NC6s_v3", "V100", "standardNCSv3Family"),
    ("Standard_NC24rs_v3", "V100", "standardNCSv3Family"),
    ("Standard_NC4as_T4_v3", "T4", "standardNCASv3_T4Family"),
    ("Standard_NC24ads_A100_v4", "A100-80GB", "standardNCADSA100v4Family"),
    ("Standard_ND96asr_v4", "A100", "standardNDASv4_A100Family"),
    ("Standard_ND96isr_H100_v5", "H100", "standardNDSH100v5Family"),
    ("Standard_NV36ads_A10_v5", "A10", "standardNVADSA10v5Family"),
    ("Standard_D4s_v5", "", "standardDSv5Family"),
])
def test_azure_family_names_as_the_usage_list_spells_them(size: str, gpu: str,
                                                          family: str) -> None:
    assert family.lower() in [f.lower() for f in azure.quota_families(size, gpu)]


def test_request_lines_name_the_quota_and_the_value() -> None:
    assert quotas.request_line("aws", "L-7212CCBC", "us-east-1", 8) == (
        "aws service-quotas request-service-quota-increase --service-code ec2 --quota-code "
        "L-7212CCBC --desired-value 8 --region us-east-1")
    assert gcp.quota_id("NVIDIA_V100_GPUS", "us-central1") == \
        "NVIDIA-V100-GPUS-per-project-region"
    assert "--quota-id=GPUS-ALL-REGIONS-per-project --preferred-value=4 --project=p" in \
        quotas.request_line("gcp", "GPUS_ALL_REGIONS", "global", 4, "p")


SPOT_EAST = offering("aws", "us-east-1", "p3.2xlarge", "spot", "V100", 1, 8, "us-east-1a")
SPOT_WEST = offering("aws", "us-west-2", "p3.2xlarge", "spot", "V100", 1, 8, "us-west-2a")
BIG_WEST = offering("aws", "us-west-2", "p3dn.24xlarge", "spot", "V100", 8, 96, "us-west-2a")
OD_WEST = offering("aws", "us-west-2", "p3.2xlarge", "on_demand", "V100", 1, 8)


def test_how_many_instances_each_quota_holds_and_the_mark() -> None:
    read = frame(quota("aws", "us-east-1", "L-7212CCBC", 0),
                 quota("aws", "us-west-2", "L-7212CCBC", 96, 8))
    got = attach(frame(SPOT_EAST, SPOT_WEST, BIG_WEST, OD_WEST), read)
    assert got["quota_instances"].tolist()[:3] == [0.0, 11.0, 0.0]
    assert math.isnan(got["quota_instances"].iloc[3])  # on-demand P in us-west-2: not read
    marks = over_quota(got).tolist()
    assert marks[0] == "quota 0 of 8 vCPUs: request L-7212CCBC in us-east-1"
    assert marks[1:] == ["", "quota 88 of 96 vCPUs: request L-7212CCBC in us-west-2", ""]
    # A gang of 12 nodes needs 12 x 8 vCPUs: more than the 88 left in us-west-2.
    gang = over_quota(got, nodes=12).tolist()
    assert gang[1] == "quota 88 of 96 vCPUs: request L-7212CCBC in us-west-2"
    assert blocked_keys(got, nodes=11) == {tuple(SPOT_EAST[k] for k in (
        "cloud", "region", "zone", "instance_type", "market", "os")), tuple(BIG_WEST[k] for k in (
            "cloud", "region", "zone", "instance_type", "market", "os"))}


def test_unknown_quotas_change_nothing() -> None:
    offerings = frame(SPOT_EAST, SPOT_WEST)
    got = attach(offerings, frame(quota("aws", "eu-west-1", "L-7212CCBC", 0)).iloc[0:0])
    assert got["quota_instances"].isna().all() and (over_quota(got) == "").all()
    ranked = behind_quota(got.assign(excluded=""))
    assert ranked[["region"]].equals(offerings[["region"]]) and (ranked["quota"] == "").all()


def test_gcp_spot_draws_on_the_preemptible_quota_where_the_project_has_one() -> None:
    v100 = offering("gcp", "us-central1", "n1-standard-8+1xnvidia-tesla-v100", "spot",
                    "V100", 1, 8)
    granted = frame(quota("gcp", "us-central1", "PREEMPTIBLE_NVIDIA_V100_GPUS", 8, 1),
                    quota("gcp", "us-central1", "NVIDIA_V100_GPUS", 0),
                    quota("gcp", "global", "GPUS_ALL_REGIONS", 4, 3))
    got = attach(frame(v100), granted).iloc[0]
    # The preemptible quota holds 7 more; the project-wide one 1: that one binds.
    assert (got["quota_code"], got["quota_instances"]) == ("GPUS_ALL_REGIONS", 1.0)
    none = frame(quota("gcp", "us-central1", "PREEMPTIBLE_NVIDIA_V100_GPUS", 0),
                 quota("gcp", "us-central1", "NVIDIA_V100_GPUS", 2, 0))
    got = attach(frame(v100), none).iloc[0]
    assert (got["quota_code"], got["quota_instances"]) == ("NVIDIA_V100_GPUS", 2.0)
    zero = frame(quota("gcp", "us-central1", "PREEMPTIBLE_NVIDIA_V100_GPUS", 0),
                 quota("gcp", "us-central1", "NVIDIA_V100_GPUS", 0))
    assert over_quota(attach(frame(v100), zero)).iloc[0] == (
        "quota 0 of 1 GPUs: request PREEMPTIBLE_NVIDIA_V100_GPUS in us-central1")


def test_a_refusal_counts_until_the_next_reading() -> None:
    before = AT - pd.Timedelta(hours=1)
    refused = frame(quota("aws", "us-west-2", "L-7212CCBC", 96, 8, refused=16,
                          refused_at=AT, observed_at=before))
    got = attach(frame(SPOT_WEST, BIG_WEST), refused)
    # 8 vCPUs still fit under a refusal of 16; 96 do not.
    assert got["quota_instances"].tolist() == [1.0, 0.0]
    assert over_quota(got).tolist()[1] == ("quota refused a launch of 16 vCPUs: request "
                                           "L-7212CCBC in us-west-2")
    newer = frame(quota("aws", "us-west-2", "L-7212CCBC", 96, 8, refused=16,
                        refused_at=before, observed_at=AT))
    assert attach(frame(SPOT_WEST), newer)["quota_instances"].tolist() == [11.0]
    # Known from a refusal alone (never read): of unknown size, nothing fits.
    only = frame(quota("aws", "us-east-1", "L-7212CCBC", NAN, NAN, refused=0, refused_at=AT,
                       observed_at=pd.NaT))
    assert over_quota(attach(frame(SPOT_EAST), only)).iloc[0] == (
        "quota refused a launch: request L-7212CCBC in us-east-1")


def test_offerings_over_quota_rank_behind_every_one_that_fits() -> None:
    ranked = attach(frame(SPOT_EAST, {**BIG_WEST, "excluded": "no throughput"}, SPOT_WEST),
                    frame(quota("aws", "us-east-1", "L-7212CCBC", 0),
                          quota("aws", "us-west-2", "L-7212CCBC", 96)))
    out = behind_quota(ranked)
    assert out["region"].tolist() == ["us-west-2", "us-east-1", "us-west-2"]
    assert out["quota"].tolist()[:2] == ["", "quota 0 of 8 vCPUs: request L-7212CCBC in "
                                             "us-east-1"]
    assert out["excluded"].iloc[2] == "no throughput"


def test_the_quota_cost_is_the_first_that_fits_less_the_cheapest_over() -> None:
    rows = [{**SPOT_EAST, "offering": "east", "usd_per_hour": 0.92, "expected_cost": 9.20},
            {**SPOT_WEST, "offering": "west", "usd_per_hour": 1.23, "expected_cost": 12.30},
            {**SPOT_WEST, "offering": "dear west", "usd_per_hour": 2.0,
             "expected_cost": 20.0}]
    held = frame(quota("aws", "us-east-1", "L-7212CCBC", 0),
                 quota("aws", "us-west-2", "L-7212CCBC", 96))
    ranked = behind_quota(attach(frame(*rows), held))
    paid = quota_cost(ranked)
    assert paid is not None
    assert (paid.chosen, paid.blocked) == ("west", "east")
    assert (round(paid.usd, 2), round(paid.usd_per_hour, 2)) == (3.10, 0.31)
    assert paid.line() == ("quota cost: $3.10 more (+$0.3100/h) on west than on east, which "
                           "the quota does not hold (quota 0 of 8 vCPUs: request L-7212CCBC "
                           "in us-east-1)")
    # Nothing over quota, nothing that fits, or the one over quota not cheaper: no cost.
    assert quota_cost(behind_quota(attach(frame(*rows), frame()))) is None
    assert quota_cost(behind_quota(attach(frame(rows[0]), held))) is None
    dear = {**rows[0], "usd_per_hour": 3.0, "expected_cost": 30.0}
    assert quota_cost(behind_quota(attach(frame(dear, rows[1]), held))) is None
