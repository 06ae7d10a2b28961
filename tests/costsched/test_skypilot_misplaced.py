"""A SkyPilot task's near misses: a costsched setting written outside the costsched:
section says where it goes; a misspelt bucket store names the close one."""

from __future__ import annotations

import pytest
import yaml

from costsched.model import InvalidInput
from costsched.skypilot import parse_task

TASK = """\
name: t
resources:
  accelerators: T4:1
run: echo
"""


def refusal(text: str) -> str:
    with pytest.raises(InvalidInput) as info:
        parse_task(yaml.safe_load(text), "task.yaml", "t")
    message = str(info.value)
    assert "\n" not in message and message.startswith("task.yaml: ")
    return message


@pytest.mark.parametrize(("text", "field"), [
    (TASK + "budget: 4\n", "budget"),
    (TASK.replace("  accelerators", "  budget: 4\n  accelerators"), "resources.budget"),
])
def test_a_costsched_setting_outside_its_section_says_where_it_goes(text: str,
                                                                    field: str) -> None:
    assert refusal(text) == (f"task.yaml: field {field}: a costsched setting, not a SkyPilot "
                             "field: write it in the task's costsched: section (costsched: "
                             "{budget: 4})")
    parse_task(yaml.safe_load(TASK + "costsched: {budget: 4}\n"), "task.yaml", "t")


def test_a_long_setting_outside_its_section_is_not_written_out() -> None:
    text = TASK + "throughputs: {" + ", ".join(f"G{i}: {i}" for i in range(30)) + "}\n"
    assert refusal(text).endswith("(costsched: {throughputs: ...})")


def test_a_misspelt_bucket_store_names_the_close_one() -> None:
    text = TASK + "file_mounts:\n  /data: {name: my-bucket, store: s33}\n"
    message = refusal(text)
    assert message.startswith("task.yaml: field file_mounts./data.store: 's33': ")
    assert message.endswith("; did you mean 's3'?")
