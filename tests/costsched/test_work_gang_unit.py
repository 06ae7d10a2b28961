"""A task of several nodes that gives no work: its unit is an hour of work of its gang (the
speed column is the gang's pace), named so in the plan's title, notes, `--json` and the
`--emit sky` comment; one node's reads as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.work import Work, assumed_work

NODES2 = """name: gang
run: python train.py
num_nodes: 2
resources:
  accelerators: L4:1
  use_spot: true
"""


def test_the_unit_of_a_gang_names_its_nodes() -> None:
    gang = Work(3600.0, 1.0, "1xL4", True, True, "task.yaml", nodes=2)
    assert gang.unit() == "hour of work on 2 nodes x 1xL4"
    assert gang.describe() == "1 h of work on 2 nodes x 1xL4 (assumed)"
    assert "figures are for 1 h of work on 2 nodes x 1xL4" in gang.assumption()
    assert gang.as_dict()["unit"] == "hour of work on 2 nodes x 1xL4"
    assert gang.as_dict()["reference"] == "1xL4"  # the GPU alone, as scripts read it
    one = Work(3600.0, 1.0, "1xL4", True, True, "task.yaml")
    assert one.unit() == "hour of work on 1xL4"


def test_a_stored_gang_keeps_its_unit() -> None:
    stored = {"spec": {"hours": 1.0, "reference_gpu": "L4:1", "num_nodes": 2,
                       "task": {"work_assumed": True, "num_nodes": 2}}, "source": "t.yaml"}
    work = assumed_work(stored)
    assert work is not None and work.unit() == "hour of work on 2 nodes x 1xL4"


def test_plan_of_a_gang_without_work_names_the_gang(cli, tmp_path: Path,  # noqa: ANN001
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "220")
    path = tmp_path / "nodes2.yaml"
    path.write_text(NODES2)
    shown = cli("plan", str(path))
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert "work not given: per hour of work on 2 nodes x 1xL4" in text, text
    assert "per hour of work on 1xL4" not in text and "work on 1xL4" not in text, text
    doc = json.loads(cli("plan", str(path), "--json").stdout)
    [job] = doc["jobs"]
    assert job["work"]["unit"] == "hour of work on 2 nodes x 1xL4" and job["work"]["nodes"] == 2
    emitted = cli("plan", str(path), "--emit", "sky")
    assert emitted.exit_code == 0, emitted.output
    [comment] = [line for line in emitted.stdout.splitlines() if "expected" in line]
    assert comment.endswith("for 1 h of work on 2 nodes x 1xL4 (assumed)."), comment


GIVEN = """name: gang
run: python train.py
num_nodes: 2
resources:
  accelerators: T4:1
  use_spot: true
costsched:
  throughputs: {T4: 17}
  steps: 3000
"""


@pytest.mark.parametrize("work", ["throughputs: {T4: 17}\n  steps: 3000", "hours: 2"])
def test_a_gangs_given_work_keeps_its_nodes(cli, tmp_path: Path, work: str) -> None:  # noqa: ANN001
    path = tmp_path / "given.yaml"
    path.write_text(GIVEN.replace("throughputs: {T4: 17}\n  steps: 3000", work))
    shown = cli("plan", str(path), "--json")
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    [job] = doc["jobs"]
    assert job["work"]["nodes"] == 2, job["work"]  # as each row's nodes
    assert {row["nodes"] for row in doc["rankings"][job["ranking_index"]]["ranking"]} == {2}


def test_a_stored_gang_given_hours_keeps_its_nodes() -> None:
    from costsched.measured import _given_hours

    work = _given_hours({"hours": 2.0, "reference_gpu": "T4:1", "num_nodes": 2})
    assert work.nodes == 2 and work.on() == "1xT4"  # its hours are on one node's GPU
