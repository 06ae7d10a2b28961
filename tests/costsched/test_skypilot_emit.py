"""A pinned task says beside each field what it writes otherwise than the file: the GPUs,
place or image of several chosen; a field kept as written is said nothing of."""

from __future__ import annotations

import yaml

from costsched.skypilot import parse_task
from costsched.skypilot_emit import emit_task

AWS = {"cloud": "aws", "region": "us-east-1", "zone": "", "market": "on_demand",
       "instance_type": "p3.2xlarge", "gpu_model": "V100", "gpu_count": 1}


def emitted(text: str) -> tuple[str, list[str]]:
    written = yaml.safe_load(text)
    changed: list[str] = []
    return emit_task(parse_task(written, "t.yaml"), AWS, written=written,
                     changed=changed), changed


def test_gpus_and_a_place_chosen_of_several_are_said_beside_their_fields() -> None:
    text, changed = emitted("resources: {accelerators: {V100: 1, T4: 1}, cloud: aws}\n"
                            "run: x")
    assert "  infra: aws/us-east-1  # pinned from cloud: aws\n" in text
    assert "  accelerators: V100:1  # pinned from accelerators: {V100: 1, T4: 1}\n" in text
    assert changed[0] == "infra: aws/us-east-1 (pinned from cloud: aws)"
    assert len(changed) == 2


def test_one_image_of_several_is_said_and_fields_kept_are_not() -> None:
    text, changed = emitted("resources:\n  accelerators: V100:1\n  infra: aws/us-east-1\n"
                            "  image_id: {us-east-1: ami-1, us-west-2: ami-2}\nrun: x")
    assert "  image_id: ami-1  # the image of us-east-1 of the 2 its image_id names\n" in text
    assert changed == ["image_id: ami-1 (the image of us-east-1 of the 2 its image_id names)"]
    text, changed = emitted("resources: {accelerators: V100, infra: aws/us-east-1}\nrun: x")
    assert changed == [] and "#" not in text
