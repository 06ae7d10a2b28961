"""A task's accelerator the catalog sells no instance type of gets the GPU meant: the
cloud's variant of it ('A10' -> 'A10G', 'L40' -> 'L40S') alone, at the count asked."""

from __future__ import annotations

import pytest
import yaml

from costsched.bundled_prices import closest_gpus
from costsched.model import InvalidInput
from costsched.skypilot import parse_task


@pytest.mark.parametrize(("asked", "meant"), [("A10", ["A10G"]), ("l40", ["L40S"]),
                                              ("A100", ["A100-80GB"]), ("RTX4090", [])])
def test_the_variant_the_clouds_sell_is_meant_first_and_alone(asked: str,
                                                              meant: list[str]) -> None:
    sold = ["A100", "A100-80GB", "A10G", "H100", "L4", "L40S", "T4"]
    assert closest_gpus(asked, sold) == meant


def _refusal(accelerators: str) -> str:
    task = f"name: a10\nresources:\n  accelerators: {accelerators}\nrun: echo hi\n"
    with pytest.raises(InvalidInput) as refused:
        parse_task(yaml.safe_load(task), "gpu_a10.yaml", "l40")
    return str(refused.value)


def test_a10_gets_did_you_mean_a10g_at_its_count() -> None:
    said = _refusal("L40:2")
    assert said == ("gpu_a10.yaml: field resources.accelerators: L40:2: the "
                    "catalog has no instance type with it; did you mean 'L40S:2'? (`costsched "
                    "gpus` lists them); `sky launch` looks in SkyPilot's catalog"), said


def test_each_unsold_accelerator_of_a_set_gets_its_own() -> None:
    said = _refusal("{L40: 1, A40: 1}")
    assert "L40:1: the catalog has no instance type with it; did you mean 'L40S:1'?" in said
    assert "A40:1: the catalog has no instance type with it; did you mean 'A10:1'?" in said
    assert said.count("`costsched gpus` lists them") == 1


def test_a_set_asking_for_the_variant_already_gets_no_did_you_mean() -> None:
    spec = parse_task(yaml.safe_load("resources: {accelerators: {L40S: 1, L40: 1}}\nrun: x"),
                      "task.yaml", "t")
    assert spec.task.notes == ["resources.accelerators: L40:1 dropped: the catalog has no "
                               "instance type with it (`costsched gpus` lists them)"]
    spec = parse_task(yaml.safe_load("resources: {accelerators: {L4: 1, L40: 1}}\nrun: x"),
                      "task.yaml", "t")
    assert spec.task.notes == ["resources.accelerators: L40:1 dropped: the catalog has no "
                               "instance type with it; did you mean 'L40S:1'? (`costsched "
                               "gpus` lists them)"]


def test_a_name_close_to_an_alias_means_the_model_the_alias_names() -> None:
    """'H100-80G' is one letter off 'H100-80GB', which is H100: H100 is meant."""
    said = _refusal("H100-80G:1")
    assert "'H100-80G': not an accelerator costsched knows; did you mean 'H100:1'?" in said, said
