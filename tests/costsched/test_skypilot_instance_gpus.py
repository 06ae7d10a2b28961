"""A task whose `instance_type` is in the catalog but has other GPUs than its
`accelerators` is refused naming the conflict: what the type has, and the two ways out."""

from __future__ import annotations

import pytest

from tests.costsched.test_skypilot import refusal


@pytest.mark.parametrize(("resources", "says"), [
    ("{accelerators: A100:1, instance_type: g4dn.xlarge}",
     "field resources.instance_type: g4dn.xlarge has 1xT4, not A100:1: drop `accelerators` "
     "or name an A100:1 type (a2-highgpu-1g)"),
    ("{gpus: A100:2, instance_type: a2-highgpu-1g}",
     "field resources.instance_type: a2-highgpu-1g has 1xA100, not A100:2: drop `gpus` or "
     "name an A100:2 type (a2-highgpu-2g)"),
])
def test_an_instance_type_whose_gpus_are_not_the_accelerators_says_so(resources: str,
                                                                       says: str) -> None:
    """The named type is in the catalog: the conflict is its GPUs, not its name."""
    message = refusal(f"resources: {resources}\nrun: x")
    assert message == f"task.yaml: {says}", message
