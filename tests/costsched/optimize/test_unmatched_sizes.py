"""A SkyPilot task whose `cpus` / `memory` leave out every offering of its GPUs in its
place and market is told so, with the size those offerings come with and the fields that
leave them out, before "no spot price known" (which its GPUs have)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from costsched.jobspec import resolve
from costsched.optimize.unmatched import unmatched
from costsched.taskfile import load
from costsched.throughput import ThroughputTable

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
ROWS = [  # cloud, region, instance type, market, GPU model, count, $/h
    ("aws", "us-east-1", "g4dn.xlarge", "spot", "T4", 1, 0.2),
    ("aws", "us-east-1", "g4dn.xlarge", "on_demand", "T4", 1, 0.526),
    ("aws", "us-east-1", "g4dn.2xlarge", "on_demand", "T4", 1, 0.752),
    ("aws", "us-east-1", "p3.2xlarge", "spot", "V100", 1, 0.92),
]
# The catalog's T4 types the sizes allow, with no spot price in the market above: named,
# with the collect that fetches today's prices.
FIT = ("aws g4dn.2xlarge, aws g4dn.4xlarge and aws g4dn.8xlarge ({} in all) fit {}, with no "
       "spot price known here: `costsched collect --cloud aws --cloud azure --cloud gcp --gpu "
       "T4` fetches today's prices, spot and on-demand")
TASK = ("name: j\nrun: 'true'\ncostsched: {steps: 2000, throughputs: {T4: 20}}\n"
        "resources:\n  accelerators: T4:1\n  use_spot: true\n")


def market(extra: tuple = ()) -> pd.DataFrame:
    frame = pd.DataFrame([*ROWS, *extra], columns=["cloud", "region", "instance_type", "market",
                                        "gpu_model", "gpu_count", "usd_per_hour"])
    return frame.assign(zone="", os="linux", effective_at=pd.Timestamp(NOW),  # (as priced)
                        on_demand_usd_per_hour=float("nan"), vcpus=0, memory_gb=0.0)


def why(tmp_path: Path, text: str, extra: tuple = ()) -> tuple[str, str]:
    path = tmp_path / "v_cpus.yaml"
    path.write_text(text)
    [spec] = load(path)
    found = unmatched(resolve(spec, ThroughputTable(), NOW, source=str(path)), market(extra),
                      NOW, now=NOW)
    assert found is not None
    return found.line("j"), str(path)


def test_cpus_and_memory_that_leave_out_every_spot_offering_are_named(tmp_path: Path) -> None:
    line, path = why(tmp_path, TASK + "  cpus: 8+\n  memory: 32+\n")
    assert line == (
        "job j: spot T4:1 comes with 4 vCPUs and 16 GB (aws g4dn.xlarge); resources.cpus 8+ "
        "and resources.memory 32+ leave it out; " + FIT.format(
            # 6 on AWS and Azure, and GCP's n1-standard-16/32 and n1-highmem-8/16/32 with a T4
            # (a task naming cpus is offered every N1 size that fits)
            11, "resources.cpus 8+ and resources.memory 32+") + "; on-demand: aws us-east-1 "
        f"g4dn.2xlarge $0.7520/h; change resources.cpus or resources.memory or "
        f"resources.use_spot in {path}"), line


def test_only_the_size_that_leaves_it_out_is_named(tmp_path: Path) -> None:
    line, path = why(tmp_path, TASK + "  cpus: 8+\n  memory: 16+\n")
    assert line == (
        "job j: spot T4:1 comes with 4 vCPUs and 16 GB (aws g4dn.xlarge); resources.cpus 8+ "
        "leaves it out; " + FIT.format(
            # 6 on AWS and Azure, and GCP's n1-standard-8/16/32, n1-highmem-8/16/32 and
            # n1-highcpu-32 with a T4 (n1-highcpu-8/16 have under 16 GB)
            13, "resources.cpus 8+") + "; on-demand: aws us-east-1 "
        f"g4dn.2xlarge $0.7520/h; change resources.cpus or resources.use_spot in {path}"), line


def test_a_size_the_spot_offering_has_leaves_it_a_plan(tmp_path: Path) -> None:
    path = tmp_path / "v_cpus.yaml"
    path.write_text(TASK + "  cpus: 4+\n  memory: 16+\n")
    [spec] = load(path)
    assert unmatched(resolve(spec, ThroughputTable(), NOW, source=str(path)), market(), NOW,
                     now=NOW) is None


def test_sizes_that_allow_an_offering_leave_the_cause_to_the_rest(tmp_path: Path) -> None:
    """cpus 8+ allows a spot g4dn.2xlarge: its price cap, not its size, keeps it out."""
    line, path = why(tmp_path, TASK.replace("throughputs: {T4: 20}",
                                            "throughputs: {T4: 20}, max_price: 0.1")
                     + "  cpus: 8+\n",
                     (("aws", "us-east-1", "g4dn.2xlarge", "spot", "T4", 1, 0.3),))
    assert line == (
        "job j: no offering that its filters allow costs at most $0.1000/h as of "
        "2026-06-01T00:00Z; the cheapest, aws us-east-1 g4dn.2xlarge spot, costs $0.3000/h; "
        f"raise costsched.max_price in {path}"), line
