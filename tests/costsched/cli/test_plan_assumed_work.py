"""A plan says what its figures rest on where they stand: a SkyPilot task that gives no work
is priced per hour of work on its GPU (no total, the key that gives the work named), speeds
given as hours on a reference GPU are shown against it, and an estimated speed marks the
figures made from it with a command that shows the rule. Every key and command a note
names is tried here. With nothing collected: the bundled list prices and spot snapshot."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

TASK = """\
name: myclf
resources:
  accelerators: {accelerators}
  use_spot: true
run: {run}
"""


def task(folder: Path, section: str = "", accelerators: str = "V100:1",
         run: str = "python train.py", name: str = "sky.yaml") -> Path:
    path = folder / name
    path.write_text(TASK.format(accelerators=accelerators, run=run) + section)
    return path


def plan_json(cli, path: Path) -> dict:  # noqa: ANN001
    result = cli("plan", path, "--json", "--top", "3")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_task_without_work_is_priced_per_hour_of_work_and_says_so(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = task(tmp_path)
    result = cli("plan", path, "--top", "3", "--wide")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "myclf: work not given: per hour of work on 1xV100; by cost" in out
    assert "$/work-h" in out and "total $" not in out and "3,600 steps" not in out
    assert (f"the work is not given in {path}: figures are for 1 h of work on 1xV100; a total "
            "needs the work: `costsched: {hours: H}` (hours of work on 1xV100), "
            "`costsched: {model: NAME, steps: N}` or `costsched: {throughputs: {GPU: "
            f"steps/s}}, steps: N}}` in {path}") in out
    assert "speed: work done in an hour against 1xV100 (1 = as fast)" in out

    doc = plan_json(cli, path)
    work = doc["jobs"][0]["work"]
    assert work["assumed"] is True and work["hours"] == 1.0 and work["reference"] == "1xV100"
    assert work["steps"] is None
    assert work["keys"] == ["costsched.hours", "costsched.model + costsched.steps",
                            "costsched.throughputs + costsched.steps"]
    assert doc["jobs"][0]["work_assumed"] == work  # the key status and migrate use
    rows = doc["rankings"][0]["ranking"]
    assert rows and all(r["usd_per_work_hour"] == pytest.approx(r["assumed"]["expected_cost"])
                        for r in rows)
    assert all(r["expected_cost"] is None for r in rows)  # the assumed hour's: under "assumed"
    assert "assumed (no work given)" in rows[0]["throughput_source"]
    # Ranked by the cost of an hour of work: the cheapest first.
    per_hour = [r["usd_per_work_hour"] for r in rows]
    assert per_hour == sorted(per_hour)


def test_the_hours_the_note_names_give_real_totals(cli, tmp_path: Path,
                                                   cloud_launcher: str) -> None:  # noqa: ANN001
    per_hour = plan_json(cli, task(tmp_path))["rankings"][0]["ranking"][0]

    hours = task(tmp_path, "costsched: {hours: 3}\n", name="hours.yaml")
    result = cli("plan", hours, "--top", "3", "--wide")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "myclf: 3 h of work on 1xV100; by cost" in out
    assert "total $" in out and "work not given" not in out and "$/work-h" not in out
    doc = plan_json(cli, hours)
    assert doc["jobs"][0]["work"]["assumed"] is False
    assert doc["jobs"][0]["work_assumed"] is None
    best = doc["rankings"][0]["ranking"][0]
    assert best["offering"] == per_hour["offering"]
    # Three hours of work cost three times one (checkpoints every 30 minutes either way),
    # and one first start, which a rate per hour of work leaves out (it comes on top).
    assert per_hour["assumed"]["start_cost"] == 0 and best["start_cost"] > 0
    assert best["expected_cost"] == pytest.approx(
        3 * per_hour["usd_per_work_hour"] + best["start_cost"])


def test_the_model_and_steps_the_note_names_give_steps(cli, tmp_path: Path) -> None:  # noqa: ANN001
    steps = task(tmp_path, "costsched: {model: ResNet-50 (batch size 64), steps: 20000}\n",
                 name="steps.yaml")
    result = cli("plan", steps, "--top", "3", "--wide")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "myclf: ResNet-50 (batch size 64), 20,000 steps; by cost" in out
    assert "steps/s" in out and "total $" in out and "work not given" not in out


def _hint(output: str) -> list[str]:
    """The command of the estimated-speed note, as argv after `costsched`."""
    found = re.search(r"estimated speed, and the (?:hours, )?cost and vs OD V100 from it "
                      r"\(`costsched "
                      r"([^`]+)` gives the rule", " ".join(output.split()))
    assert found, output
    return shlex.split(found.group(1))


def test_an_estimated_speed_of_the_tasks_own_work_points_at_its_explanation(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(tmp_path)
    path = task(tmp_path, accelerators="{V100: 1, T4: 1}")
    result = cli("plan", path.name, "--top", "5", "--wide")
    assert result.exit_code == 0, result.output
    assert re.search(r"\$0\.\d+\*", result.stdout)  # the V100's cost, from its estimated speed
    argv = _hint(result.stdout)
    assert argv[:2] == ["plan", "sky.yaml"] and argv[2] == "--explain"
    shown = cli(*argv)
    assert shown.exit_code == 0, shown.output
    # the unit: the set's slower GPU, the T4, whatever the order
    assert "(estimated): estimate: V100 against T4 (the unit of an assumed hour" in shown.stdout


def test_an_estimated_speed_of_a_bundled_model_points_at_the_throughput_table(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "t4.yaml"
    path.write_text("name: t4\nmodel: ResNet-50 (batch size 64)\nsteps: 20000\n"
                    "constraints: {gpu_models: [T4], gpu_counts: [1]}\n")
    result = cli("plan", path, "--top", "3", "--wide")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert re.search(r"\d\.\d+\* │\s+\$\d+\.\d\d\*", result.stdout)  # hours, cost marked
    argv = _hint(result.stdout)
    assert argv == ["throughput", "show", "--model", "ResNet-50 (batch size 64)"]
    shown = cli(*argv)
    assert shown.exit_code == 0, shown.output
    assert "T4" in shown.stdout and "estimate" in " ".join(shown.stdout.split())
    assert "`throughputs:` in the job's file" in out and "gives measured ones" in out
    # The key: a measured T4 figure in the job's file, and nothing is estimated.
    path.write_text(path.read_text() + "throughputs: {T4: 2.0}\n")
    measured = cli("plan", path, "--top", "3", "--wide")
    assert measured.exit_code == 0, measured.output
    text = " ".join(measured.stdout.split()).replace(str(path), "FILE")  # (its folder's name)
    assert not re.search(r"\d\*", text) and "estimated" not in text
    assert re.search(r"│\s+2 │", measured.stdout)


def test_launch_and_status_of_a_task_without_work_say_what_their_figures_rest_on(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    project = tmp_path / "project"
    project.mkdir()
    path = task(project, "workdir: .\n",
                run=f"{sys.executable} -c 'import time; time.sleep(60)'")
    launched = cli("launch", path, "--wait", "0")
    try:
        assert launched.exit_code == 0, launched.output
        out = " ".join(launched.stdout.split())
        assert (f"job 1: the work is not given in {path}, so its total is not known and the "
                "rest cannot be priced: figures are for 1 h of work on 1xV100") in out
        status = json.loads(cli("status", "1", "--json").stdout)
        job = status["jobs"][0] if isinstance(status, dict) else status[0]
        assert job["work_assumed"]["assumed"] is True
        assert job["work_assumed"]["steps"] is None  # the assumed hour's are no steps of its
        assert job["work_assumed"]["keys"][0] == "costsched.hours"
        # No share of an assumed hour stands in for progress.
        assert job["progress"] is None and job["progress_source"] is None
        # migrate says once that the work is not given (its rest cannot be priced), then
        # what gives it (text); the JSON keeps the whole note.
        advised = cli("migrate", "--dry-run")
        assert advised.exit_code == 0, advised.output
        said = " ".join(advised.stdout.split())
        assert said.count("the work is not given") == 1, said
        assert "note: a total needs the work: `costsched: {hours: H}`" in said
        [advice] = json.loads(cli("migrate", "--dry-run", "--json").stdout)
        assert advice["work_assumed"]["assumed"] is True
    finally:
        stopped = cli("stop", "1")
        assert stopped.exit_code == 0, stopped.output


def test_a_large_sweep_without_work_shows_the_cost_of_an_hour_of_it(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    lrs = ", ".join(f"0.{i:02d}" for i in range(1, 22))
    path = task(tmp_path, f"costsched: {{sweep: {{LR: [{lrs}]}}}}\n")
    result = cli("plan", path, "--wide")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "21 jobs in 1 group of identical jobs" in out
    assert "1 h of work on 1xV100 (assumed)" in out and re.search(r"\$0\.\d{4}/work-h", out)
    assert f"the work is not given in {path}: figures are for 1 h of work" in out


@pytest.mark.parametrize("option", [["--budget", "0.05"], ["--deadline", "0.5"]])
def test_a_refusal_on_assumed_work_says_its_figures_are_of_the_assumed_hour(
        cli, tmp_path: Path, option: list[str]) -> None:  # noqa: ANN001
    path = task(tmp_path)
    result = cli("plan", path, *option)
    assert result.exit_code == 1
    out = " ".join(result.output.split())
    limit = option[0].removeprefix("--")
    # What cannot be checked, and the keys that give the work, come first
    assert out.startswith(
        f"no plan: job myclf: its work is not given, so its {limit} cannot be checked: "
        "`costsched: {hours: H}` (hours of work on 1xV100), `costsched: {model: NAME, "
        "steps: N}` or `costsched: {throughputs: {GPU: steps/s}, steps: N}` in "
        f"{path} gives it; for 1 h of work on 1xV100 (assumed), "), out
    assert ("(assumed), budget $0.0500 is" if limit == "budget"
            else "(assumed), it cannot meet its deadline of 0.5 h") in out
    given = task(tmp_path, "costsched: {hours: 1}\n", name="given.yaml")  # the same hour, said
    said = " ".join(cli("plan", given, *option).output.split()).replace(str(given), "FILE")
    assert "assumed" not in said, said


def test_launch_refuses_assumed_work_in_the_words_plan_uses(cli, tmp_path: Path  # noqa: ANN001
                                                           ) -> None:
    path = task(tmp_path, "costsched: {deadline: 0.5}\n")  # a deadline, and still no work
    planned = " ".join(cli("plan", path).output.split())
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2
    [line] = launched.output.strip().splitlines()
    assert line.startswith(f"error: job myclf: its work is not given, so its deadline cannot "
                           f"be checked: `costsched: {{hours: H}}` (hours of work on 1xV100), "
                           f"`costsched: {{model: NAME, steps: N}}` or `costsched: "
                           f"{{throughputs: {{GPU: steps/s}}, steps: N}}` in {path} gives it; "
                           "for 1 h of work on 1xV100 (assumed), it cannot meet its deadline "
                           "of 0.5 h")
    # the third key, followed: the plan then has a total
    given = task(tmp_path, "costsched: {throughputs: {V100: 5.0}, steps: 900}\n",
                 name="given3.yaml")
    assert "work not given" not in " ".join(cli("plan", given).output.split())
    # The same words, but for the wider offering each names: a plan reads the prices of
    # the task's GPU models only, a launch every price (an H100 meets this deadline).
    def wider(text: str) -> str:
        return re.sub(r", or (this one|one at least \S+ h from now) with [^;]*? allowed[^(]*"
                      r"\([^)]*\)", "", text)

    assert wider(line.removeprefix("error: ")) in wider(planned.removeprefix("no plan: "))
