"""A job that names only its GPUs is offered each GPU's default host (GCP's T4:1 on
n1-standard-4, V100:1 on n1-standard-8): its plan is the one it had before the catalog
listed every N1 size with GPUs. A task naming its host (cpus, memory or instance_type) is
offered every N1 size that fits, the cheapest first, priced as machine + GPUs."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched import bundled_prices, catalog, clouds, service
from costsched.default_hosts import OTHER_HOST, defaults, names_a_host, other_host, other_hosts
from costsched.service.gpus import gpu_summary

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


def _plan(tmp_path: Path, resources: str, name: str = "task.yaml"):
    path = tmp_path / name
    path.write_text(f"resources: {resources}\nrun: python train.py\n")
    [job] = service.plan(str(tmp_path / "empty.sqlite"), path, at=NOW).jobs
    return job


def test_a_pair_is_another_host_when_its_machine_is_not_its_gpus_default() -> None:
    assert other_host("n1-highcpu-4+1xnvidia-tesla-t4")
    assert other_host("n1-standard-1+1xnvidia-tesla-v100")
    assert not other_host("n1-standard-4+1xnvidia-tesla-t4")
    assert not other_host("n1-standard-64+8xnvidia-tesla-v100")
    assert not other_host("g4dn.xlarge") and not other_host("a2-highgpu-1g")
    assert names_a_host(["g4dn.xlarge", "n1-highmem-8+1xnvidia-tesla-t4"])
    assert not names_a_host(["g4dn.xlarge", "n1-standard-4+1xnvidia-tesla-t4"])


def test_every_default_host_is_a_catalog_type_within_gcps_limit() -> None:
    for (gpu, count), machine in defaults().items():
        name = f"{machine}+{count}x{clouds.get('gcp').accelerator(gpu)}"
        row = catalog.lookup("gcp", name)
        assert row is not None, name
        assert (row["gpu_model"], int(row["gpu_count"])) == (gpu, count)


# The best offering each had before every N1 size was in the catalog (main's plans).
@pytest.mark.parametrize(("resources", "best", "price"), [
    ("{accelerators: V100:1}", ("gcp", "us-central1", "n1-standard-8+1xnvidia-tesla-v100"),
     2.86),
    ("{accelerators: T4:1}", ("aws", "us-east-1", "g4dn.xlarge"), 0.526),
    ("{accelerators: V100:1, use_spot: true}", ("aws", "us-east-1", "p3.2xlarge"), 0.6929),
    ("{accelerators: T4:1, use_spot: true}", ("aws", "us-west-2", "g4dn.xlarge"), 0.1809),
    ("{cloud: gcp, accelerators: T4:1}",
     ("gcp", "us-central1", "n1-standard-4+1xnvidia-tesla-t4"), 0.54),
])
def test_a_task_naming_only_its_gpus_plans_as_before(tmp_path: Path, resources: str,
                                                     best: tuple, price: float) -> None:
    job = _plan(tmp_path, resources)
    assert job.best is not None
    assert (job.best["cloud"], job.best["region"], job.best["instance_type"]) == best
    assert job.best["usd_per_hour"] == pytest.approx(price)
    ranked = job.ranked
    hidden = ranked["excluded"] == OTHER_HOST
    assert hidden.any()  # the other N1 sizes of its GPUs are there, left out as such
    assert (~hidden | other_hosts(ranked["instance_type"])).all()
    # one of another GPU, count, place or market is left out as such, not as a host size
    mismatched = ranked["excluded"].str.contains("not allowed", na=False)
    assert not (mismatched & hidden).any()


def test_a_job_file_naming_only_a_gpu_model_gets_its_default_host(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text("name: j\nrun: python train.py\nmodel: ResNet-50 (batch size 64)\n"
                    "steps: 1000\nconstraints: {gpu_models: [T4], clouds: [gcp], "
                    "markets: [on_demand]}\n")
    [job] = service.plan(str(tmp_path / "empty.sqlite"), path, at=NOW).jobs
    assert job.best is not None
    assert job.best["instance_type"] == "n1-standard-4+1xnvidia-tesla-t4"


def test_a_task_naming_cpus_gets_the_cheapest_n1_host_that_has_them(tmp_path: Path) -> None:
    job = _plan(tmp_path, "{accelerators: T4:1, cpus: 4+}")
    best = job.best
    assert best is not None
    assert (best["cloud"], best["region"], best["instance_type"]) == (
        "gcp", "us-central1", "n1-highcpu-4+1xnvidia-tesla-t4")
    # n1-highcpu-4 ($0.14170/h) + a T4 ($0.35/h) in us-central1, skypilot-catalog v8
    assert best["usd_per_hour"] == pytest.approx(0.1417 + 0.35)
    # the cheapest of every T4:1 type of 4 vCPUs or more that the catalog prices on demand
    listed = catalog.on_demand_prices()
    fits = listed[(listed["gpu_model"] == "T4") & (listed["gpu_count"] == 1)
                  & (listed["vcpus"] >= 4) & listed["retired"].isna()]
    assert best["usd_per_hour"] == pytest.approx(fits["usd_per_hour"].min())
    assert not (job.ranked["excluded"] == OTHER_HOST).any()  # it named its host's size


def test_a_task_naming_an_n1_machine_plans_it_at_machine_plus_gpu(tmp_path: Path) -> None:
    job = _plan(tmp_path, "{instance_type: n1-standard-8, accelerators: T4:1}")
    assert job.best is not None
    assert (job.best["region"], job.best["instance_type"]) == (
        "us-central1", "n1-standard-8+1xnvidia-tesla-t4")
    assert job.best["usd_per_hour"] == pytest.approx(0.38 + 0.35)


def test_the_gpus_summary_prices_each_gpu_on_its_default_host() -> None:
    frame = gpu_summary(None, NOW)
    v100 = frame[(frame["gpu_model"] == "V100") & (frame["gpu_count"] == 1)].iloc[0]
    assert v100["on_demand_where"] == "gcp us-central1 n1-standard-8+1xnvidia-tesla-v100"
    assert not any(other_host(w.rsplit(" ", 1)[-1]) for w in frame["on_demand_where"]
                   if isinstance(w, str))
    light = bundled_prices.gpu_summary(NOW)  # the quick path without a store says the same
    assert [r["on_demand_where"] for r in light] == list(frame["on_demand_where"])
