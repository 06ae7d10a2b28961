"""The bundled catalog prices every whole-GPU size of a GPU model it lists where the sources
have one: A10 on Azure's NVadsA10 v5 (one and two GPUs; the fractional sizes are not GPU
counts), on-demand and spot, with the dated source each price came from."""

from __future__ import annotations

import json

from costsched import bundled_prices


def test_azure_a10_sizes_are_priced_on_demand_and_spot() -> None:
    types = {r["instance_type"]: r for r in bundled_prices.bundled_rows("instance_types.csv")
             if r["gpu_model"] == "A10"}
    assert {t: (int(r["gpu_count"]), int(r["vcpus"])) for t, r in types.items()} == {
        "Standard_NV36ads_A10_v5": (1, 36), "Standard_NV72ads_A10_v5": (2, 72)}
    for prices, usd in (("on_demand_prices.csv", 3.2), ("spot_prices.csv", 0.8)):
        rows = [r for r in bundled_prices.bundled_rows(prices)
                if r["instance_type"] == "Standard_NV36ads_A10_v5"]
        assert {r["region"] for r in rows} == {"eastus", "eastus2", "westus2", "westus3"}
        assert {float(r["usd_per_hour"]) for r in rows} == {usd}
        assert all("skypilot-catalog v8 azure/vms.csv" in r["source"] for r in rows), rows


def test_an_a10_task_plans_on_azure(cli, tmp_path) -> None:  # noqa: ANN001
    task = tmp_path / "a10.yaml"
    task.write_text("name: a10\nresources: {accelerators: A10:1, use_spot: true}\n"
                    "run: python train.py\ncostsched: {steps: 1000, throughputs: {A10: 5}}\n")
    result = cli("plan", task, "--json", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    best = json.loads(result.stdout)["rankings"][0]["ranking"][0]
    assert (best["cloud"], best["instance_type"], best["market"], best["usd_per_hour"]) == (
        "azure", "Standard_NV36ads_A10_v5", "spot", 0.8), best
