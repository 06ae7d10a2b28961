"""CPU instance types in the catalog: gpu_count 0, no GPU model, never in a GPU's plans."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
import pytest

from costsched import catalog
from costsched.model import InvalidInput
from costsched.prices import prices_at

NOW = datetime(2026, 11, 26, tzinfo=timezone.utc)


def test_cpu_types_of_every_cloud_load_with_no_gpu_model() -> None:
    everything = catalog.instance_types(include_cpu=True)
    cpu = everything[everything["gpu_count"] == 0]
    assert set(cpu["cloud"]) == {"aws", "gcp", "azure"}
    assert (cpu["gpu_model"] == "").all()
    assert (cpu["vcpus"] > 0).all()
    assert catalog.lookup("aws", "m6i.xlarge")["gpu_count"] == 0


def test_gpu_views_leave_cpu_types_out() -> None:
    assert (catalog.instance_types()["gpu_count"] > 0).all()
    assert (catalog.on_demand_observations()["gpu_count"] > 0).all()
    assert (catalog.spot_observations()["gpu_count"] > 0).all()


def test_prices_list_cpu_types_only_when_asked() -> None:
    gpus = prices_at(None, NOW)
    assert not gpus.empty and (gpus["gpu_count"] > 0).all()
    both = prices_at(None, NOW, include_cpu=True)
    cpu = both[both["gpu_count"] == 0]
    assert set(cpu["market"]) == {"on_demand", "spot"}
    assert cpu["usd_per_gpu_hour"].isna().all()  # no GPUs: no price per GPU-hour
    m6i = cpu[(cpu["instance_type"] == "m6i.xlarge") & (cpu["region"] == "us-east-1")]
    assert m6i.set_index("market")["usd_per_hour"].to_dict() == pytest.approx(
        {"on_demand": 0.192, "spot": 0.0751})
    spot = m6i[m6i["market"] == "spot"].iloc[0]
    assert spot["spot_discount"] == pytest.approx(1 - 0.0751 / 0.192)


@pytest.mark.parametrize(("model", "count", "field"), [
    ("V100", 0, "gpu_model"), ("", 2, "gpu_model"), ("V100", -1, "gpu_count"),
    ("V100", 1.5, "gpu_count")])
def test_a_bad_type_row_names_file_row_and_field(model: str, count: float, field: str) -> None:
    rows = pd.DataFrame({"cloud": ["aws"], "instance_type": ["x"], "gpu_model": [model],
                         "gpu_count": [count], "gpu_memory_gb": [0], "vcpus": [4],
                         "memory_gb": [16]})
    with pytest.raises(InvalidInput, match=rf"^types\.csv: row 2: field {field}: "):
        catalog.check_types(rows, "types.csv")


def test_a_spot_snapshot_listed_for_two_months_offers_the_newest_that_held() -> None:
    def spot(at: datetime) -> list[float]:
        frame = prices_at(None, at, markets=["spot"], regions=["us-east-1"],
                          instance_types=["p5.48xlarge"])
        return frame["usd_per_hour"].tolist()

    assert spot(NOW) == [pytest.approx(23.45325)]  # the 2025-10 snapshot, not both
    assert spot(datetime(2025, 7, 1, tzinfo=timezone.utc)) == [pytest.approx(26.7861)]
