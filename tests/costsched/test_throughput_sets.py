"""A SkyPilot accelerator set is a set: the order its members are written in changes no
member's speed relative to another's, no cost and no rank. A task that gives no work is
planned on an hour of work on its slowest member, a name for the unit only: no member's speed
was measured, so every member is estimated alike (the catalog's relative speeds), never
the others with a slow-side haircut the unit escapes. A speed that is given is another
matter: the members not measured are estimated from it, slow side and all."""

from __future__ import annotations

from datetime import datetime, timezone
from itertools import permutations
from pathlib import Path

import pytest
import yaml

from costsched import service
from costsched.skypilot import parse_task
from costsched.throughput import GPU_SPECS, RULE_SCALE

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


def planned(folder: Path, members: tuple[str, ...], section: str = "") -> object:
    accelerators = "{" + ", ".join(f"{m}: 1" for m in members) + "}"
    doc = yaml.safe_load(f"name: t\nresources: {{accelerators: {accelerators}, "
                         f"use_spot: true}}\nrun: python train.py\n{section}")
    spec = parse_task(doc, "task.yaml", "t")
    return service.plan(str(folder / "empty.sqlite"), spec, at=NOW).jobs[0]


def ranking(job: object) -> list[tuple]:
    ranked = job.choices  # type: ignore[attr-defined]
    return [tuple(r) for r in ranked[["cloud", "region", "zone", "instance_type", "market",
                                      "gpu_model"]].itertuples(index=False)]


def speeds(job: object) -> dict[str, float]:
    """Each GPU model's speed in the plan, the on-demand V100 baseline's among them."""
    ranked = job.choices  # type: ignore[attr-defined]
    out = {g: float(s) for g, s in zip(ranked["gpu_model"], ranked["steps_per_second"],
                                        strict=True)}
    return {**out, "V100": job.baseline.steps_per_second}  # type: ignore[attr-defined]


def index(gpu: str) -> float:
    return GPU_SPECS[gpu].speed_index("fp32")


@pytest.mark.parametrize("members", [("L4", "A10G"), ("L4", "A10G", "T4")])
def test_the_order_of_a_set_changes_no_speed_ratio_cost_or_rank(
        tmp_path: Path, members: tuple[str, ...]) -> None:
    plans = {order: planned(tmp_path, order) for order in permutations(members)}
    first = plans[members]
    assert set(speeds(first)) == {*members, "V100"}
    for order, job in plans.items():
        assert ranking(job) == ranking(first), order
        sps = speeds(job)
        for gpu in sps:  # each member (and the baseline) against the others: the catalog's
            for other in sps:
                assert sps[gpu] / sps[other] == pytest.approx(index(gpu) / index(other)), (
                    order, gpu, other)
        # An hour of the unit's work costs what the unit's speed says (within what the
        # preemption model adds per hour, which varies a little with the amount of work).
        unit = sps[members[0]] / speeds(first)[members[0]]
        costs = job.choices["expected_cost"].to_numpy()  # type: ignore[attr-defined]
        assert costs * unit == pytest.approx(
            first.choices["expected_cost"].to_numpy(), rel=0.01)  # type: ignore[attr-defined]


def test_a_member_given_a_speed_estimates_the_others_on_the_slow_side(
        tmp_path: Path) -> None:
    section = "costsched: {throughputs: {A10G: 9.0}, steps: 2400}\n"
    for order in permutations(("L4", "A10G")):
        sps = speeds(planned(tmp_path, order, section))
        assert sps["A10G"] == 9.0
        assert sps["L4"] == pytest.approx(9.0 * index("L4") / index("A10G") * RULE_SCALE["fp32"])


def test_the_explanation_names_the_unit_and_no_haircut(tmp_path: Path) -> None:
    job = planned(tmp_path, ("L4", "A10G"))
    ranked = job.choices  # type: ignore[attr-defined]
    basis = str(ranked[ranked["gpu_model"] == "A10G"].iloc[0]["throughput_source"])
    assert "fitted to err on the slow side" not in basis
    assert "A10G against L4 (the unit of an assumed hour of work) x 1.44" in basis
    assert "not cut to the slow side since no GPU's speed is known" in basis, basis
