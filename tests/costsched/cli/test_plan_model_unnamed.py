"""`plan --json` names the model a job file names, and says none (null) for a task that
names none, never its name standing in for one."""

from __future__ import annotations

from pathlib import Path

from tests.costsched.cli.test_plan_assumed_work import plan_json, task


def test_plan_json_says_a_task_without_a_model_has_none(cli, tmp_path: Path) -> None:  # noqa: ANN001
    doc = plan_json(cli, task(tmp_path, "costsched:\n  hours: 2\n"))
    assert doc["jobs"][0]["name"] == "myclf" and doc["jobs"][0]["model"] is None
    named = task(tmp_path, "costsched:\n  model: Transformer (batch size 256)\n  steps: 1000\n",
                 name="named.yaml")
    assert plan_json(cli, named)["jobs"][0]["model"] == "Transformer (batch size 256)"
