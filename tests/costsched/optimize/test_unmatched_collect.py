"""A job whose GPUs are priced, but not where its file keeps it, is told how to get a price
there, as every other "no price" is: the `costsched collect` line where the catalog has
the place's instance types of those GPUs, else the `catalog refresh` that finds them
first."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from costsched.jobspec import resolve
from costsched.optimize.unmatched import unmatched
from costsched.taskfile import load
from costsched.throughput import ThroughputTable
from tests.costsched.optimize.test_no_plan_keys import market

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
AZURE_T4 = ("azure", "eastus", "Standard_NC4as_T4_v3", "on_demand", "T4", 1, 0.526)


def why(tmp_path: Path, constraints: str, at: datetime = NOW) -> str:
    frame = market()
    extra = frame.iloc[:1].copy()
    for column, value in zip(["cloud", "region", "instance_type", "market", "gpu_model",
                              "gpu_count", "usd_per_hour"], AZURE_T4, strict=True):
        extra[column] = value
    path = tmp_path / "job.yaml"
    path.write_text("name: j\nrun: 'true'\nsteps: 2000\nthroughputs: {V100: 20, A100: 20}\n"
                    f"constraints: {constraints}\n")
    [spec] = load(path)
    found = unmatched(resolve(spec, ThroughputTable(), at, source=str(path)),
                      pd.concat([frame, extra], ignore_index=True), at, now=NOW)
    assert found is not None
    return found.line("j")


def test_a_gpu_the_job_s_cloud_has_in_its_catalog_gets_the_collect_line(
        tmp_path: Path) -> None:
    line = why(tmp_path, "{clouds: [azure], gpu_models: [V100]}")
    assert "no price known as of 2026-06-01T00:00Z for V100 in azure" in line, line
    assert ("; `costsched collect --cloud azure --gpu V100` fetches today's prices, spot and "
            "on-demand; change constraints.clouds in") in line, line


def test_a_gpu_the_job_s_cloud_lacks_in_its_catalog_gets_the_refresh_then_the_collect(
        tmp_path: Path) -> None:
    line = why(tmp_path, "{clouds: [azure], gpu_models: [A100]}")
    assert "no price known as of 2026-06-01T00:00Z for A100 in azure" in line, line
    assert ("; costsched's catalog has no instance type with A100 in azure (`costsched "
            "catalog refresh --cloud azure` finds new GPU instance types; `costsched collect "
            "--cloud azure --gpu A100` then fetches their prices); change constraints.clouds "
            "in") in line, line


def test_a_gpu_the_job_s_cloud_has_at_other_counts_only_gets_no_line(tmp_path: Path) -> None:
    line = why(tmp_path, "{clouds: [aws], gpu_models: [A100], gpu_counts: [1]}")
    assert "no price known as of 2026-06-01T00:00Z for A100:1 in aws" in line, line
    assert "costsched collect" not in line and "catalog refresh" not in line, line


def test_a_region_s_line_names_the_region_and_its_cloud(tmp_path: Path) -> None:
    line = why(tmp_path, "{regions: [eastus], gpu_models: [V100]}")
    assert "no price known as of 2026-06-01T00:00Z for V100 in eastus" in line, line
    assert "`costsched collect --cloud azure --region eastus --gpu V100` fetches" in line, line


def test_a_plan_of_the_past_gets_no_collect_line(tmp_path: Path) -> None:
    line = why(tmp_path, "{clouds: [azure], gpu_models: [V100]}",
               at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert "costsched collect" not in line and "catalog refresh" not in line, line


def test_the_collect_line_installs_what_its_cloud_s_collector_lacks_first(
        tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """On a machine without the cloud's collector library, the line as written works: the
    extra's `pip install` first, then the collect."""
    import sys

    monkeypatch.setitem(sys.modules, "requests", None)  # not installed, as imports go
    line = why(tmp_path, "{clouds: [azure], gpu_models: [V100]}")
    assert ("; `pip install 'costsched[azure]'`, then `costsched collect --cloud azure --gpu "
            "V100` fetches today's prices, spot and on-demand; change constraints.clouds "
            "in") in line, line
