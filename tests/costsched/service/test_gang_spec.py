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


def test_a_job_yaml_file_with_num_nodes_is_read_as_a_job_yaml_not_as_a_task(tmp_path) -> None:  # noqa: ANN001
    """num_nodes is written in both formats: a job YAML's own fields keep it a job YAML
    (as docs/multi-node.md says); a task's fields, or a bare run, make it a task."""
    import yaml

    from costsched.taskfile import load

    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump({**JOB, "num_nodes": 2,
                                   "constraints": {"markets": ["flex_start"]}}))
    [spec] = load(job)
    assert (spec.num_nodes, spec.task.num_nodes) == (2, 2)
    assert spec.constraints.markets == ["flex_start"] and spec.steps == 10
    bare = tmp_path / "bare.yaml"
    bare.write_text("name: b\nnum_nodes: 3\nrun: python train.py\n")
    task = tmp_path / "task.yaml"
    task.write_text(yaml.safe_dump({**TASK, "num_nodes": 4}))
    assert [s.num_nodes for f in (bare, task) for s in load(f)] == [3, 4]
    with pytest.raises(InvalidInput, match=r"task.yaml: field steps: a costsched setting, "
                                           r"not a SkyPilot field"):
        task.write_text(yaml.safe_dump({**TASK, "num_nodes": 4, "steps": 10}))
        load(task)  # a task's own field makes it a task: costsched's go in its section


def test_every_job_of_a_gang_sweep_is_planned_on_all_its_nodes(tmp_path) -> None:  # noqa: ANN001
    """A sweep's jobs share what was resolved for the first, a gang's nodes included: each
    is priced for its two instances, not the first alone."""
    from costsched import service

    task = tmp_path / "gang.yaml"
    task.write_text(
        "name: gang\nnum_nodes: 2\nrun: python train.py --lr $LR\nenvs: {LR: '0.1'}\n"
        "resources: {infra: aws/us-east-1, accelerators: V100:1}\n"
        "costsched: {model: ResNet-50 (batch size 64), steps: 50000,\n"
        "            sweep: {LR: ['0.1', '0.2', '0.3']}}\n")
    plans = service.plan(str(tmp_path / "p.sqlite"), [str(task)], at="2020-03-01").jobs
    assert [p.job.name for p in plans] == ["gang-1", "gang-2", "gang-3"]
    assert [p.job.nodes for p in plans] == [2, 2, 2]
    assert [p.job.envs["LR"] for p in plans] == ["0.1", "0.2", "0.3"]
    prices = {float(p.best["usd_per_hour"]) for p in plans}
    assert len(prices) == 1 and (plans[0].ranked["nodes"] == 2).all()
