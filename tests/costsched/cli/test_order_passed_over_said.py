"""`plan`, `plan --json` and `launch` say each `ordered:` alternative a job's plan passes
over, with why, in the task's order: the table's notes and launch's lines under its table
as one line each, --json as `passed_over` (the alternative, what it asks, why, the one
taken) beside the same line in its notes. A job on its first alternative has none."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

AT = "2026-11-01T00:00:00+00:00"
PASSED = """\
name: ord
run: "true"
resources:
  use_spot: true
  ordered:
    - {accelerators: A100:1}
    - {accelerators: L40:1}
    - {accelerators: V100:1, cloud: aws}
    - {accelerators: T4:1}
"""
FIRST = PASSED.split("  ordered:")[0] + """  ordered:
    - {accelerators: V100:1, cloud: aws}
    - {accelerators: L40:1}
    - {accelerators: A100:1}
"""


def _task(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text(text)
    return path


def test_plan_says_each_alternative_passed_over_in_the_tasks_order(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    task = _task(tmp_path, PASSED)
    shown = cli("plan", task, "--at", AT)
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    said = re.findall(r"ordered: alternative (\d)[ :].*?; passed over: the order holds for the "
                      r"rest \(alternative (\d) first\)", text)
    assert said == [("1", "3"), ("2", "3")], text
    assert "ordered: alternative 1 (A100:1 spot): no spot price known as of " in text
    assert text.count("L40:1 dropped: the catalog has no instance type with it") == 1, text
    doc = json.loads(cli("plan", task, "--at", AT, "--json").stdout)
    [job] = doc["jobs"]
    over = job["passed_over"]
    assert [(o["alternative"], o["taken"]) for o in over] == [(1, 3), (2, 3)]
    assert over[0]["asked"] == "A100:1 spot"
    assert over[0]["cause"].startswith("no spot price known as of 2026-11-01T00:00Z for A100:1")
    assert over[1]["asked"] == "" and over[1]["cause"].startswith(
        "resources.ordered[1].accelerators: L40:1 dropped: ")
    for o in over:  # the same words as the line in its notes
        asked = f" ({o['asked']})" if o["asked"] else ""
        assert (f"ordered: alternative {o['alternative']}{asked}: {o['cause']}; passed over: "
                f"the order holds for the rest (alternative {o['taken']} first)") in job["notes"]


def test_a_plan_on_its_first_alternative_says_none(cli, tmp_path: Path) -> None:  # noqa: ANN001
    task = _task(tmp_path, FIRST)
    shown = cli("plan", task, "--at", AT)
    assert shown.exit_code == 0, shown.output
    assert "passed over" not in shown.stdout
    assert "ordered: alternative 1 (aws " in " ".join(shown.stdout.split())
    [job] = json.loads(cli("plan", task, "--at", AT, "--json").stdout)["jobs"]
    assert job["passed_over"] == []


@pytest.mark.parametrize("text", [PASSED, FIRST], ids=["passed over", "first"])
def test_launch_says_the_alternatives_it_passes_over(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    launched = cli("launch", _task(tmp_path, text), "--launcher", "local", "--wait", "0")
    assert launched.exit_code == 0, launched.output
    lines = [" ".join(line.split()) for line in launched.stdout.splitlines()
             if "passed over" in line]
    if text is FIRST:
        assert lines == []
        return
    assert [line.split(":", 2)[:2] for line in lines] == [
        ["job 1", " ordered"], ["job 1", " ordered"]], lines
    assert lines[0].startswith("job 1: ordered: alternative 1 (A100:1 spot): no spot price "
                               "known as of ")
    assert lines[1].startswith("job 1: ordered: alternative 2: resources.ordered[1]."
                               "accelerators: L40:1 dropped: ")
    assert all(line.endswith("(alternative 3 first)") for line in lines)
