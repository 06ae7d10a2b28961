"""`optimize.unmatched` says what exists within the job's own scope: the regions of its
clouds where its shape is priced in its market (never another cloud's regions, never a
look-alike of another cloud), the counts its GPU is priced at on its clouds, the market of
every price it names (the job's market first), and no second note for a GPU of a task's set
that reading the task dropped already."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd

from costsched.model import Constraints, Job
from costsched.optimize.job import Workload
from costsched.optimize.unmatched import shapes, unmatched
from costsched.throughput import ThroughputTable

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
ROWS = [  # cloud, region, instance type, market, GPU model, count, $/h
    ("aws", "us-east-1", "g5.xlarge", "spot", "A10G", 1, 0.40),
    ("aws", "us-west-2", "g5.xlarge", "spot", "A10G", 1, 0.36),
    ("aws", "eu-west-1", "g5.xlarge", "spot", "A10G", 1, 0.50),
    ("aws", "ap-northeast-1", "g5.xlarge", "on_demand", "A10G", 1, 1.30),
    ("aws", "us-east-1", "g5.12xlarge", "spot", "A10G", 4, 2.10),
    ("aws", "us-east-1", "g6.xlarge", "on_demand", "L4", 1, 0.8048),
    ("aws", "us-west-2", "g6.xlarge", "on_demand", "L4", 1, 0.8048),
    ("aws", "eu-west-2", "g6.xlarge", "on_demand", "L4", 1, 0.90),
    ("gcp", "us-south1", "g2-standard-4", "spot", "L4", 1, 0.30),
    ("gcp", "asia-southeast1", "g2-standard-4", "spot", "L4", 1, 0.52),
    ("gcp", "us-central1", "a2-highgpu-1g", "spot", "A100", 1, 1.10),
    ("azure", "centralus", "Standard_NV36ads_A10_v5", "spot", "A10", 1, 0.60),
]
WHEN = "2026-06-01T00:00Z"


def market() -> pd.DataFrame:
    frame = pd.DataFrame(ROWS, columns=["cloud", "region", "instance_type", "market",
                                        "gpu_model", "gpu_count", "usd_per_hour"])
    return frame.assign(zone="", os="linux", effective_at=pd.Timestamp(NOW),
                        on_demand_usd_per_hour=float("nan"))


def job(**constraints: object) -> Workload:
    return Workload(Job("j", "run", "ResNet-50 (batch size 64)", 20_000.0,
                        constraints=Constraints(**constraints)), ThroughputTable(), 0.5, 0.2)


def why(**constraints: object) -> str:
    found = unmatched(job(**constraints), market(), NOW, now=NOW)
    return "" if found is None else found.line("j")


def test_a_region_without_price_names_where_the_shape_is_priced_on_the_job_s_clouds() -> None:
    said = why(clouds=("aws",), regions=("ap-south-1",), gpu_models=("A10G",),
               gpu_counts=(1,), markets=("spot",))
    # cheapest first; ap-northeast-1 has A10G:1 on-demand only; no gcp or azure region,
    # and ap-south-1, a real aws region, is no typo of another: its prices are collected
    assert said == (f"job j: no offering priced as of {WHEN} has region ap-south-1; A10G:1 "
                    "spot on aws is priced in us-west-2, us-east-1, eu-west-1; `costsched "
                    "collect --cloud aws --region ap-south-1 --gpu A10G` fetches today's "
                    "prices, spot and on-demand; change constraints.regions")


def test_a_misspelt_region_is_matched_with_the_job_s_clouds_regions_only() -> None:
    said = why(clouds=("aws",), regions=("us-south-1",), gpu_models=("A10G",),
               gpu_counts=(1,), markets=("spot",))
    assert "us-south1" not in said and "asia" not in said, said
    assert said.endswith("did you mean 'us-east-1' or 'us-west-2'?; change "
                         "constraints.regions"), said
    # Without a shape, the regions of the job's clouds that are priced.
    assert why(clouds=("gcp",), regions=("us-centrall",)) == (
        f"job j: no offering priced as of {WHEN} has region us-centrall; priced on gcp: "
        "asia-southeast1, us-central1, us-south1; did you mean 'us-central1'?; change "
        "constraints.regions")


def test_the_counts_a_gpu_is_priced_at_are_of_the_job_s_clouds() -> None:
    assert why(clouds=("aws",), gpu_models=("L4",), gpu_counts=(4,)) == (
        f"job j: no instance type priced as of {WHEN} is L4:4; L4 is priced at 1 GPU on aws; "
        "change constraints.gpu_counts")
    # A GPU its clouds do not price at all: where it is priced, said so.
    assert why(clouds=("aws",), gpu_models=("A100",), gpu_counts=(4,)) == (
        f"job j: no instance type priced as of {WHEN} is A100:4; A100 is priced at 1 GPU "
        "on gcp; change constraints.gpu_counts")


def test_prices_elsewhere_say_their_market_and_the_job_s_market_comes_first() -> None:
    # No spot price of aws's L4:1 type anywhere: the market path, its on-demand prices
    # elsewhere (a task's L4:1 on aws is aws's types)
    assert why(clouds=("aws",), regions=("ap-northeast-1",), gpu_models=("L4",),
               gpu_counts=(1,), markets=("spot",), instance_types=("g6.xlarge",)) == (
        f"job j: no spot price known as of {WHEN} for L4:1 in aws, ap-northeast-1; "
        "on-demand elsewhere: aws us-east-1 g6.xlarge $0.8048/h, aws us-west-2 g6.xlarge "
        "$0.8048/h, aws eu-west-2 g6.xlarge $0.9000/h; not there because its file keeps it in "
        "region ap-northeast-1; `costsched collect --cloud aws --region ap-northeast-1 --gpu "
        "L4` fetches today's prices, spot and on-demand; change constraints.markets or "
        "constraints.regions")
    # Spot A10G:1 elsewhere: those prices, said as spot, the on-demand one left out.
    assert why(clouds=("aws",), regions=("ap-northeast-1",), gpu_models=("A10G",),
               gpu_counts=(1,), markets=("spot",)).startswith(
        f"job j: no spot price known as of {WHEN} for A10G:1 in aws, ap-northeast-1; "
        "on-demand: aws ap-northeast-1 g5.xlarge $1.3000/h; ")
    assert why(clouds=("aws",), regions=("eu-west-2",), gpu_models=("A10G",),
               gpu_counts=(1,), markets=("spot",)) == (
        f"job j: no price known as of {WHEN} for A10G:1 in aws, eu-west-2; spot elsewhere: "
        "aws us-west-2 g5.xlarge $0.3600/h, aws us-east-1 g5.xlarge $0.4000/h, aws eu-west-1 "
        "g5.xlarge $0.5000/h; not there because its file keeps it in region eu-west-2; "
        "`costsched collect --cloud aws --region eu-west-2 --gpu A10G` fetches today's "
        "prices, spot and on-demand; change constraints.regions")
    # Either market: each named, the cheapest first.
    assert why(clouds=("gcp",), gpu_models=("A10G",), gpu_counts=(1,)) == (
        f"job j: no price known as of {WHEN} for A10G:1 in gcp; spot elsewhere: aws us-west-2 "
        "g5.xlarge $0.3600/h, aws us-east-1 g5.xlarge $0.4000/h, aws eu-west-1 g5.xlarge "
        "$0.5000/h; on-demand elsewhere: aws ap-northeast-1 g5.xlarge $1.3000/h; not there "
        "because its file keeps it in cloud gcp; costsched's catalog has no instance type "
        "with A10G in gcp (`costsched catalog refresh --cloud gcp` finds new GPU instance "
        "types; `costsched collect --cloud gcp --gpu A10G` then fetches their prices); "
        "change constraints.clouds")


def test_a_gpu_a_task_s_clouds_have_no_type_of_gets_no_shape_of_its_own() -> None:
    """A task's {L4, A10G} on gcp: reading it dropped A10G with its note (gcp has no A10G
    type); the plan's frame (gcp's prices only) does not name it a second time."""
    gcp = market()[market()["cloud"] == "gcp"]
    asked = job(clouds=("gcp",), markets=("spot",), gpu_models=("A10G", "L4"),
                gpu_counts=(1,), instance_types=("g2-standard-4",))
    assert [name for name, _ in shapes(asked, gcp)] == []
    # A GPU its clouds do have a type of, with no price, still has its shape.
    asked = job(clouds=("gcp",), markets=("spot",), gpu_models=("L4", "T4"),
                gpu_counts=(1,),
                instance_types=("g2-standard-4", "n1-standard-4+1xnvidia-tesla-t4"))
    assert [name for name, _ in shapes(asked, gcp)] == ["L4:1", "T4:1"]
