"""max_restarts_on_errors, read from a SkyPilot task (resources.job_recovery) and from
costsched's own job file, kept with the job's spec; 0 when not given (today's behaviour)."""

from __future__ import annotations

import pytest
import yaml

from costsched.jobspec import parse
from costsched.model import InvalidInput
from costsched.skypilot import parse_task
from costsched.skypilot_emit import emit_task

OWN = {"name": "r", "throughputs": {"L4": 30}, "steps": 2000, "run": "true"}
OFFERING = {"cloud": "aws", "region": "us-east-1", "zone": "us-east-1a",
            "instance_type": "g6.xlarge", "market": "spot", "gpu_model": "L4", "gpu_count": 1}


def task(resources: str):  # noqa: ANN201
    return parse_task(yaml.safe_load(f"resources: {resources}\nrun: x"), "task.yaml", "t")


def test_a_task_s_max_restarts_on_errors_is_kept_with_the_job() -> None:
    spec = task("{accelerators: L4, job_recovery: {strategy: FAILOVER, "
                "max_restarts_on_errors: 3}}")
    assert spec.max_restarts_on_errors == 3  # was: refused ("expected 0")
    assert spec.model_dump(mode="json")["max_restarts_on_errors"] == 3  # as stored
    assert "max_restarts_on_errors" not in spec.task.model_dump()
    assert task("{accelerators: L4, job_recovery: FAILOVER}").max_restarts_on_errors == 0
    assert task("{accelerators: L4}").max_restarts_on_errors == 0


def test_a_job_file_s_max_restarts_on_errors() -> None:
    assert parse({**OWN, "max_restarts_on_errors": 2}, "j.yaml").max_restarts_on_errors == 2
    assert parse(OWN, "j.yaml").max_restarts_on_errors == 0


@pytest.mark.parametrize("value", [-1, "two", True, 1.5, 1001])
def test_a_job_file_s_bad_max_restarts_on_errors_is_one_line(value: object) -> None:
    with pytest.raises(InvalidInput) as info:
        parse({**OWN, "max_restarts_on_errors": value}, "j.yaml")
    said = str(info.value)
    assert "\n" not in said and said.startswith("j.yaml: job 'r': ") and \
        "max_restarts_on_errors" in said, said


def test_emit_writes_a_job_file_s_restarts_in_skypilot_s_field() -> None:
    emitted = yaml.safe_load(emit_task(parse({**OWN, "max_restarts_on_errors": 2}, "j.yaml"),
                                       OFFERING))
    assert emitted["resources"]["job_recovery"] == {"max_restarts_on_errors": 2}
    assert "job_recovery" not in yaml.safe_load(emit_task(parse(OWN, "j.yaml"),
                                                          OFFERING))["resources"]


def test_a_misspelt_job_recovery_field_names_the_close_one() -> None:
    with pytest.raises(InvalidInput) as info:
        task("{accelerators: L4, job_recovery: {max_restart_on_errors: 1}}")
    said = str(info.value)
    assert "\n" not in said and "resources.job_recovery.max_restart_on_errors" in said, said
    assert "expected strategy or max_restarts_on_errors" in said, said
    assert said.endswith("did you mean 'max_restarts_on_errors'?"), said
