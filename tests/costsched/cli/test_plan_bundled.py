"""`costsched plan` with nothing collected: the bundled dated prices plan spot GPUs on GCP,
a plan as of a day uses that day's price, and superseded bundled prices are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CLOCK = "2026-11-28"  # the test's clock, never the machine's


def task(tmp_path: Path, accelerators: str, spot: bool) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text(f"resources:\n  accelerators: {accelerators}\n"
                    f"  use_spot: {str(spot).lower()}\nrun: python train.py\n")
    return path


def ranking(cli, path: Path, at: str) -> dict:  # noqa: ANN001
    result = cli("plan", path, "--at", at, "--top", "100", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["rankings"][0]


def test_a_spot_a100_80gb_task_plans_on_gcp(cli, tmp_path: Path) -> None:  # noqa: ANN001
    best = ranking(cli, task(tmp_path, "A100-80GB:1", True), CLOCK)["ranking"][0]
    assert (best["cloud"], best["market"], best["instance_type"]) == (
        "gcp", "spot", "a2-ultragpu-1g")
    assert best["price_age_hours"] == pytest.approx(121 * 24)


def test_a_plan_as_of_a_day_uses_that_days_price(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = task(tmp_path, "H100:8", True)
    for at, price in (("2026-03-01", 27.018347), ("2026-07-30", 50.609541)):
        rows = ranking(cli, path, at)["ranking"]
        (central,) = [r for r in rows if r["instance_type"] == "a3-highgpu-8g"
                      and r["region"] == "us-central1"]
        assert central["usd_per_hour"] == pytest.approx(price), at
        assert all(r["price_effective_at"] <= at + "T23:59" for r in rows)


def test_the_plan_names_the_superseded_prices_it_left_out(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = task(tmp_path, "H100:8", False)
    shared = ranking(cli, path, CLOCK)
    assert shared["excluded"]["superseded price"] == 2
    assert "aws us-west-1 p5.48xlarge on-demand ($122.9000/h of 2025-05-01)" in \
        shared["superseded"]
    assert all(r["region"] != "us-west-1" for r in shared["ranking"])
    text = " ".join(cli("plan", path, "--at", CLOCK).stdout.split())  # lines unwrapped
    assert "superseded" in text and "aws ap-northeast-1 p5.48xlarge" in text
