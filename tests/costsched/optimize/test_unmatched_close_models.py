"""A "no plan" for a GPU shape unpriced in the market asked names what exists instead, a
close model of the same family among it (A100-80GB for A100, H100-MEGA for H100, and back),
at the counts asked, in the market and place asked, with the key that asks for it."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd

from costsched.catalog import gpu_family as family
from costsched.model import Constraints, Job
from costsched.optimize.job import Workload
from costsched.optimize.unmatched import unmatched
from costsched.throughput import ThroughputTable

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
ROWS = [  # cloud, region, instance type, market, GPU model, count, $/h
    ("gcp", "us-central1", "a2-highgpu-1g", "on_demand", "A100", 1, 3.67),
    ("aws", "us-east-1", "p4d.24xlarge", "spot", "A100", 8, 6.79),
    ("gcp", "us-south1", "a2-ultragpu-1g", "spot", "A100-80GB", 1, 0.77),
    ("gcp", "us-central1", "a2-ultragpu-1g", "spot", "A100-80GB", 1, 0.95),
    ("gcp", "us-south1", "a2-ultragpu-8g", "spot", "A100-80GB", 8, 6.14),
    ("aws", "us-east-1", "p3.2xlarge", "spot", "V100", 1, 0.92),
]


def market() -> pd.DataFrame:
    frame = pd.DataFrame(ROWS, columns=["cloud", "region", "instance_type", "market",
                                        "gpu_model", "gpu_count", "usd_per_hour"])
    return frame.assign(zone="", os="linux", effective_at=pd.Timestamp(NOW),
                        on_demand_usd_per_hour=float("nan"))


def why(**constraints: object) -> str:
    asked = Workload(Job("j", "run", "ResNet-50 (batch size 64)", 20_000.0,
                         constraints=Constraints(**constraints)), ThroughputTable(), 0.5, 0.2)
    found = unmatched(asked, market(), NOW, now=NOW)
    assert found is not None
    return found.line("j")


def test_a100_spot_with_none_names_the_a100_80gb_spot_at_the_count_asked() -> None:
    said = why(markets=("spot",), gpu_models=("A100",), gpu_counts=(1,))
    assert said.startswith("job j: no spot price known as of 2026-06-01T00:00Z for A100:1; ")
    # the cheapest of the close model at one GPU, not its 8-GPU type
    assert "; spot of a close model: A100-80GB:1 from $0.7700/h (gcp us-south1 " \
           "a2-ultragpu-1g); " in said
    assert said.endswith("change constraints.markets or constraints.gpu_models")


def test_a_close_model_is_looked_for_in_the_place_asked() -> None:
    said = why(markets=("spot",), gpu_models=("A100",), gpu_counts=(1,),
               regions=("us-central1",))
    assert "spot of a close model: A100-80GB:1 from $0.9500/h (gcp us-central1 " \
           "a2-ultragpu-1g)" in said
    assert "us-south1" not in said
    # Nowhere in the place: none named, and its key is not offered as a way out.
    said = why(markets=("spot",), gpu_models=("A100",), gpu_counts=(1,), clouds=("aws",))
    assert "close model" not in said
    assert "gpu_models" not in said


def test_without_a_close_model_nothing_more_is_said() -> None:
    said = why(markets=("on_demand",), gpu_models=("V100",), gpu_counts=(1,))
    assert "close model" not in said


def test_the_families_are_the_catalog_s_names_before_a_variant_s_suffix() -> None:
    assert family("A100-80GB") == family("A100") == "A100"
    assert family("H100-MEGA") == family("H100") == "H100"
    assert family("A10G") != family("A100")


def test_and_back_a100_80gb_on_demand_with_none_names_the_a100() -> None:
    said = why(markets=("on_demand",), gpu_models=("A100-80GB",), gpu_counts=(1,))
    assert "on-demand of a close model: A100:1 from $3.6700/h (gcp us-central1 " \
           "a2-highgpu-1g)" in said
