"""A task's GCP N1 machine type with GPUs (n1-standard-8 with T4:1) plans on the catalog's
MACHINE+NxACCELERATOR type, priced as the machine plus its GPUs; a machine type the catalog
has only with other GPUs is refused saying where the accelerators come and what it comes
with, and a pair over GCP's N1 limits names the limit and the sizes that take the GPUs; a
misspelt type still gets its closest names."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched import bundled_prices, service
from tests.costsched.test_skypilot import refusal, task

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


def _list_price(instance_type: str, region: str) -> float:
    rows = [r for r in bundled_prices.bundled_rows("on_demand_prices.csv")
            if (r["instance_type"], r["region"]) == (instance_type, region)
            and "N1 machine row" in r["source"]]
    assert len(rows) == 1, rows
    return float(rows[0]["usd_per_hour"])


def test_an_n1_machine_with_any_gpu_count_gcp_allows_is_one_catalog_type() -> None:
    spec = task("resources: {cloud: gcp, instance_type: n1-highmem-16, accelerators: P4:2}\n"
                "run: x")
    assert spec.constraints.instance_types == ["n1-highmem-16+2xnvidia-tesla-p4"]


def test_plan_ranks_the_n1_type_priced_as_machine_plus_gpu(tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text("resources: {cloud: gcp, instance_type: n1-standard-8, "
                    "accelerators: T4:1}\nrun: python train.py\n")
    best = service.plan(str(tmp_path / "empty.sqlite"), path, at=NOW).jobs[0].best
    assert best is not None
    assert (best["instance_type"], best["region"]) == ("n1-standard-8+1xnvidia-tesla-t4",
                                                       "us-central1")
    # us-central1 in skypilot-catalog v8: n1-standard-8 $0.38/h + one T4 $0.35/h.
    assert best["usd_per_hour"] == pytest.approx(0.38 + 0.35)
    assert best["usd_per_hour"] == _list_price(best["instance_type"], "us-central1")


@pytest.mark.parametrize(("resources", "says"), [
    ("n1-highcpu-96, accelerators: T4:1",
     "n1-highcpu-96 with T4:1 is not in costsched's catalog: GCP attaches T4:1 to N1 "
     "machine types of at most 48 vCPUs and 312 GB, and n1-highcpu-96 has 96 vCPUs and "
     "86.4 GB; T4:1 comes on n1-highcpu-2 to n1-highcpu-32 (gcp); n1-highcpu-96 comes "
     "with P4:4, T4:4 or V100:8; change resources.instance_type or resources.accelerators"),
    ("n1-standard-32, accelerators: V100:1",
     "n1-standard-32 with V100:1 is not in costsched's catalog: GCP attaches V100:1 to N1 "
     "machine types of at most 12 vCPUs and 78 GB, and n1-standard-32 has 32 vCPUs and "
     "120 GB; V100:1 comes on n1-standard-1 to n1-standard-8 (gcp); n1-standard-32 comes "
     "with P100 (2 or 4), P4 (2 or 4), T4 (1, 2 or 4) or V100 (4 or 8); change "
     "resources.instance_type or resources.accelerators"),
])
def test_a_pair_over_gcps_n1_limit_names_the_limit_and_the_sizes(resources: str,
                                                                  says: str) -> None:
    message = refusal(f"resources: {{instance_type: {resources}}}\nrun: x")
    assert message == f"task.yaml: field resources.instance_type: {says}", message


def test_a_machine_type_the_catalog_has_with_other_gpus_says_what_it_comes_with() -> None:
    message = refusal("resources: {instance_type: n1-standard-8, accelerators: A100:1}\n"
                      "run: x")
    assert message == (
        "task.yaml: field resources.instance_type: n1-standard-8 with A100:1 is not in "
        "costsched's catalog: A100:1 comes on a2-highgpu-1g (gcp); n1-standard-8 comes with "
        "P100 (1, 2 or 4), P4 (1, 2 or 4), T4 (1, 2 or 4) or V100 (1, 2, 4 or 8); change "
        "resources.instance_type or resources.accelerators (`costsched catalog refresh "
        "--cloud gcp` adds the clouds' newer types, `sky launch` looks it up in SkyPilot's "
        "catalog)"), message


def test_a_misspelt_machine_type_still_gets_its_closest_names() -> None:
    message = refusal("resources: {instance_type: n1-standrd-8, accelerators: T4:1}\nrun: x")
    assert message == (
        "task.yaml: field resources.instance_type: 'n1-standrd-8': not an instance type of "
        "costsched's catalog on any cloud; `costsched catalog refresh` adds the clouds' "
        "newer types, `sky launch` looks it up in SkyPilot's catalog; did you mean "
        "'n2-standard-8' or 'n2-standard-4' or 'n2-standard-2'?"), message
