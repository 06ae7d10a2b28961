"""Sizes in a SkyPilot task written with a unit, as SkyPilot reads them: memory and
disk_size in GB by default, with GB or TB after the number; one line naming the forms for
a size that is none."""

from __future__ import annotations

import pytest
import yaml

from costsched.model import InvalidInput
from costsched.skypilot import parse_task


def task(text: str):  # noqa: ANN201
    return parse_task(yaml.safe_load(text), "task.yaml", "t")


def refusal(text: str) -> str:
    with pytest.raises(InvalidInput) as info:
        task(text)
    message = str(info.value)
    assert "\n" not in message and message.startswith("task.yaml: field ")
    return message


@pytest.mark.parametrize(("written", "same_as"), [
    ("16GB+", "16+"), ("16 GiB+", "16+"), ("0.25TB+", "256+"), ("0.25tb+", "256GB+"),
])
def test_a_memory_with_a_unit_filters_as_its_gb_do(written: str, same_as: str) -> None:
    def types(memory: str) -> list[str]:
        spec = task(f"resources: {{cpus: 8+, memory: '{memory}'}}\nrun: x")
        return sorted(spec.constraints.instance_types)

    assert types(written) and types(written) == types(same_as)


def test_a_terabyte_memory_is_more_than_any_gb_below_it() -> None:
    small = task("resources: {cpus: 8+, memory: 32+}\nrun: x").constraints.instance_types
    big = task("resources: {cpus: 8+, memory: 0.25TB+}\nrun: x").constraints.instance_types
    assert big and set(big) < set(small)


@pytest.mark.parametrize("memory", ["16PB+", "sixteen", "16GB++"])
def test_a_memory_that_is_no_size_names_the_units_taken(memory: str) -> None:
    message = refusal(f"resources: {{accelerators: L4:1, memory: '{memory}'}}\nrun: x")
    assert "resources.memory" in message and f"'{memory}'" in message
    assert "a unit of GB or TB may follow ('32GB', '1TB')" in message


@pytest.mark.parametrize(("written", "gb"), [(200, 200), ("200GB", 200), ("1TB", 1024)])
def test_a_disk_size_with_a_unit(written: object, gb: int) -> None:
    text = yaml.safe_dump({"resources": {"accelerators": "L4:1", "disk_size": written},
                           "run": "x"})
    assert task(text).task.disk_size == gb


def test_a_disk_size_that_is_no_whole_size_names_the_units_taken() -> None:
    message = refusal("resources: {accelerators: L4:1, disk_size: 1.5TBs}\nrun: x")
    assert "resources.disk_size" in message and "expected whole GB from 1 to" in message
    assert "('32GB', '1TB')" in message
