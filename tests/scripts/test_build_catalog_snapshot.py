"""scripts/build_catalog_snapshot.py, offline: the GCP price history read from every commit
of a pricing.yml (a local git repository of two fixture versions stands in for GitHub),
rebuilt into data files of its own, and the bundled data being what its sources give."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "gcp_pricing"


@pytest.fixture(scope="module")
def build():  # noqa: ANN201 - the script, as a module
    spec = importlib.util.spec_from_file_location(
        "build_catalog_snapshot", ROOT / "scripts" / "build_catalog_snapshot.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture()
def source(build):  # noqa: ANN001, ANN201
    """A history of two machine types in two regions, from a local repository."""
    return build.HistorySource(
        "history.csv", "gcp", "example/pricing", "pricing.yml", "2026-01-01",
        regions=("us-central1", "europe-west4"),
        types=(("a3-highgpu-8g", "H100", 8, 208, 1872), ("g2-standard-4", "L4", 1, 4, 16)))


def git(repo: Path, *args: str, day: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    if day:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{day}T06:10:00+00:00"
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture()
def repository(tmp_path: Path) -> tuple[Path, list[str]]:
    """A git repository whose pricing.yml was written on 2025-12-20 (before the history's
    first day), 2026-01-08 and 2026-01-15; and the last two commits, oldest first."""
    repo = tmp_path / "pricing"
    repo.mkdir()
    git(repo, "init", "-q")
    commits = []
    for day, name in (("2025-12-20", "pricing-2026-01-08.yml"),
                      ("2026-01-08", "pricing-2026-01-08.yml"),
                      ("2026-01-15", "pricing-2026-01-15.yml")):
        text = (FIXTURES / name).read_text()
        (repo / "pricing.yml").write_text(text + f"# {day}\n")
        git(repo, "add", "pricing.yml")
        git(repo, "commit", "-q", "-m", day, day=day)
        commits.append(git(repo, "rev-parse", "HEAD").strip())
    return repo, commits[1:]


def test_every_commit_since_the_first_day_gives_dated_rows(build, source, repository) -> None:  # noqa: ANN001
    repo, (first, second) = repository
    rows = build.fetch_history(source, url=str(repo))
    assert list(rows.columns) == build.HISTORY_COLUMNS
    # Newest first; the kept types and regions only (no africa-south1, no n2-standard-2).
    assert rows["observed_date"].tolist() == ["2026-01-15"] * 3 + ["2026-01-08"] * 3
    assert set(rows["source_commit"]) == {first, second}
    assert set(zip(rows["instance_type"], rows["region"], strict=True)) == {
        ("a3-highgpu-8g", "us-central1"), ("a3-highgpu-8g", "europe-west4"),
        ("g2-standard-4", "us-central1")}
    central = rows[(rows["instance_type"] == "a3-highgpu-8g")
                   & (rows["region"] == "us-central1")].set_index("observed_date")
    assert central.loc["2026-01-08", "spot_price_usd_per_hour"] == "20.390157"
    assert central.loc["2026-01-15", "spot_price_usd_per_hour"] == "23.450108"
    assert central.loc["2026-01-15", "ondemand_usd_per_hour"] == "88.49"


def test_a_rebuild_replaces_the_historys_rows_and_keeps_the_others(
        build, source, repository, tmp_path: Path) -> None:  # noqa: ANN001
    repo, (_, second) = repository
    build.fetch_history(source, url=str(repo)).to_csv(tmp_path / "history.csv", index=False)
    data = tmp_path / "data"
    data.mkdir()
    (data / "instance_types.csv").write_text(
        "cloud,instance_type,gpu_model,gpu_count,gpu_memory_gb,vcpus,memory_gb\n"
        "gcp,g2-standard-4,L4,1,24,4,16\n")
    old = "example/pricing pricing.yml (commit 000000000000)"
    (data / "on_demand_prices.csv").write_text(
        "cloud,region,instance_type,usd_per_hour,as_of,source\n"
        f"gcp,us-central1,g2-standard-4,0.7,2025-11-01,{old}\n"
        "gcp,us-central1,g2-standard-4,0.7,2025-01,another table\n")
    (data / "spot_prices.csv").write_text(
        "cloud,region,zone,instance_type,usd_per_hour,as_of,source\n"
        f"gcp,us-central1,,g2-standard-4,0.2,2025-11-01,{old}\n")
    files = build.rebuild(data, tmp_path, sources=(), histories=(source,), n1_sources=())
    listed, spot = files["on_demand_prices.csv"], files["spot_prices.csv"]
    assert old not in set(listed["source"]) | set(spot["source"])  # read again, replaced
    assert "another table" in set(listed["source"])  # another source's row is kept
    assert len(listed) == 1 + 6 and len(spot) == 6
    newest = spot[(spot["as_of"] == "2026-01-15") & (spot["instance_type"] == "g2-standard-4")]
    assert newest["usd_per_hour"].tolist() == ["0.301"]
    assert newest["source"].tolist() == [f"example/pricing pricing.yml (commit {second[:12]})"]
    added = files["instance_types.csv"].set_index("instance_type")
    assert added.loc["a3-highgpu-8g", ["gpu_model", "gpu_count", "vcpus"]].tolist() == [
        "H100", "8", "208"]
    # --check names what is out of date; a write brings it up to date.
    assert build.write(files, data, check=True) == list(files)
    assert build.write(files, data) == list(files)
    assert build.write(build.rebuild(data, tmp_path, sources=(), histories=(source,),
                                     n1_sources=()), data, check=True) == []
    assert pd.read_csv(data / "spot_prices.csv")["as_of"].max() == "2026-01-15"


def test_n1_machines_take_every_gpu_count_gcps_limits_allow(build, tmp_path: Path) -> None:  # noqa: ANN001
    (tmp_path / "n1.csv").write_text(
        "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,"
        "AvailabilityZone,Price,SpotPrice\n"
        "n1-standard-8,8.0,30.0,,,us-central1,us-central1-a,0.38,0.10446\n"
        "n1-standard-8,8.0,30.0,,,asia-east1,asia-east1-a,0.44,0.07126\n"
        "n1-highcpu-96,96.0,86.400390625,,,us-central1,us-central1-a,3.40073,0.94435\n")
    (tmp_path / "gpus.csv").write_text(
        "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,"
        "AvailabilityZone,Price,SpotPrice\n"
        ",,,T4,1,us-central1,us-central1-b,0.35,0.175\n"
        ",,,V100,1,us-central1,us-central1-a,2.48,\n")
    (tmp_path / "gcp_n1_gpu_limits.csv").write_text(
        "gpu_model,gpu_count,max_vcpus,max_memory_gb,source\n"
        "T4,1,48,312,docs\nV100,1,12,78,docs\n")
    n1 = build.N1Source("n1.csv", "gpus.csv", "2025-10", "a table")
    types, on_demand, spot = build.n1_rows(n1, tmp_path, tmp_path)
    # n1-highcpu-96 is over both limits; asia-east1 prices neither GPU.
    assert types.values.tolist() == [
        ["gcp", "n1-standard-8+1xnvidia-tesla-t4", "T4", 1, 16, 8, "30"],
        ["gcp", "n1-standard-8+1xnvidia-tesla-v100", "V100", 1, 16, 8, "30"]]
    assert on_demand[["instance_type", "region", "usd_per_hour", "as_of", "source"]
                     ].values.tolist() == [
        ["n1-standard-8+1xnvidia-tesla-t4", "us-central1", 0.73, "2025-10", "a table"],
        ["n1-standard-8+1xnvidia-tesla-v100", "us-central1", 2.86, "2025-10", "a table"]]
    # Spot only where both the machine and its GPUs have a spot price.
    assert spot[["instance_type", "region", "zone", "usd_per_hour", "source"]
                ].values.tolist() == [["n1-standard-8+1xnvidia-tesla-t4", "us-central1", "",
                                       0.27946, "a table: SpotPrice"]]


def test_the_bundled_n1_types_keep_to_gcps_limits() -> None:
    from costsched import catalog
    from costsched.n1_gpu_limits import limits

    types = catalog.instance_types()
    n1 = types[types["instance_type"].str.startswith("n1-") & types["retired"].isna()]
    assert len(n1) > 200
    for row in n1.to_dict("records"):
        limit = limits()[(row["gpu_model"], row["gpu_count"])]
        assert limit.takes(row["vcpus"], row["memory_gb"]), row["instance_type"]
    # Every N1 machine size sold takes some GPU count (the largest take the most GPUs).
    machines = set(n1["instance_type"].str.split("+").str[0])
    assert len(machines) == 22 and "n1-highmem-96" in machines


def test_the_bundled_data_is_what_its_sources_give(build) -> None:  # noqa: ANN001
    assert build.write(build.rebuild(), check=True) == []
