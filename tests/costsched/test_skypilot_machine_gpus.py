"""A task's machine type that the catalog has with other GPUs than its `accelerators`
(GCP's n1-standard-8, listed as n1-standard-8+1xnvidia-tesla-v100, ...) is refused saying
so: where the accelerators come, and what the machine type comes with; a misspelt type
still gets its closest names."""

from __future__ import annotations

from tests.costsched.test_skypilot import refusal


def test_a_machine_type_the_catalog_has_with_other_gpus_says_what_it_comes_with() -> None:
    message = refusal("resources: {instance_type: n1-standard-8, accelerators: T4:1}\nrun: x")
    assert message == (
        "task.yaml: field resources.instance_type: n1-standard-8 with T4:1 is not in "
        "costsched's catalog: T4:1 comes on n1-standard-4 (gcp); n1-standard-8 comes with "
        "P100:1, T4:2 or V100:1; change resources.instance_type or resources.accelerators "
        "(`costsched catalog refresh --cloud gcp` adds the clouds' newer types, `sky launch` "
        "looks it up in SkyPilot's catalog)"), message


def test_a_misspelt_machine_type_still_gets_its_closest_names() -> None:
    message = refusal("resources: {instance_type: n1-standrd-8, accelerators: T4:1}\nrun: x")
    assert message == (
        "task.yaml: field resources.instance_type: 'n1-standrd-8': not an instance type of "
        "costsched's catalog on any cloud; `costsched catalog refresh` adds the clouds' "
        "newer types, `sky launch` looks it up in SkyPilot's catalog; did you mean "
        "'n2-standard-8' or 'n2-standard-4' or 'n2-standard-2'?"), message
