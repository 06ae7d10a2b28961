"""num_nodes as written in a job YAML and in a SkyPilot task."""

from __future__ import annotations

import pytest

from costsched.jobspec import parse
from costsched.model import InvalidInput
from costsched.skypilot import parse_task

TASK = {"name": "t", "resources": {"accelerators": "V100:1"}, "run": "python train.py"}
JOB = {"name": "j", "throughputs": {"V100": 1.0}, "steps": 10, "run": "true"}


def test_a_task_of_several_nodes_is_read_and_handed_to_the_launchers() -> None:
    spec = parse_task({**TASK, "num_nodes": 4}, "t.yaml")
    assert spec.num_nodes == 4 and spec.task.num_nodes == 4
    again = parse(spec.model_dump(mode="json"))  # as stored, then read back
    assert again.num_nodes == 4 and again.task.num_nodes == 4
    assert parse_task(TASK, "t.yaml").num_nodes == 1


@pytest.mark.parametrize("value", [0, -1, 65, 1.5, True, "2"])
def test_a_bad_node_count_is_refused_in_one_line_naming_file_and_field(value) -> None:
    with pytest.raises(InvalidInput, match=r"^t.yaml: field num_nodes: .*expected a whole "
                       r"number of nodes, 1 to 64$"):
        parse_task({**TASK, "num_nodes": value}, "t.yaml")


def test_a_job_yaml_says_num_nodes_too() -> None:
    assert parse({**JOB, "num_nodes": 3}, "j.yaml").task.num_nodes == 3
    with pytest.raises(InvalidInput, match="j.yaml.*num_nodes"):
        parse({**JOB, "num_nodes": 0}, "j.yaml")
    with pytest.raises(InvalidInput, match="j.yaml.*num_nodes"):
        parse({**JOB, "num_nodes": True}, "j.yaml")
