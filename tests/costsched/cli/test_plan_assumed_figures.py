"""A plan marks an assumed figure where it stands and names what gives the real one: a
preemption rate that is its cloud's default alone (the table's mark and note, --json's
`preemption_rate_assumed`, --explain's line), the figures of the assumed hour of a task
that gives no work (null at --json's top level, kept under "assumed"), the first start
that a per-work-hour figure leaves out, and the unit of the assumed hour, which is no
speed. An env named like a secret is steered to --secret. Bundled prices, no signals and
nothing observed: every rate is a default."""

from __future__ import annotations

import json
import re
from pathlib import Path

TASK = """\
name: sky
resources:
  accelerators: {accelerators}
  use_spot: true
envs:
  STEPS: 10
  HF_TOKEN:
run: python train.py
"""


def task(folder: Path, accelerators: str = "A10G:1") -> Path:
    path = folder / "sky.yaml"
    path.write_text(TASK.format(accelerators=accelerators))
    return path


def said(output: str) -> str:
    return " ".join(output.split())


def test_an_assumed_preemption_rate_is_marked_and_its_note_names_the_commands(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    result = cli("plan", task(tmp_path), "--top", "3", "--wide")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "spot │" in line]
    assert rows and all("0.085~" in row and "aws default" in row for row in rows), rows
    out = said(result.stdout)
    assert ("~ assumed preemption rate: the cloud's default (aws 0.085/h), nothing published "
            "or observed for the offering; `costsched risk import FILE --kind "
            "advisor|placement|eviction` stores") in out
    assert "`costsched risk show`" in out and "`plan --availability LOG`" in out

    doc = json.loads(cli("plan", task(tmp_path), "--json", "--top", "3").stdout)
    ranking = doc["rankings"][0]["ranking"]
    assert [r["preemption_rate_assumed"] for r in ranking] == [True] * len(ranking)

    explained = cli("plan", task(tmp_path), "--explain", "1")
    assert explained.exit_code == 0, explained.output
    assert ("the rate is assumed: the aws default, nothing published or observed for this "
            "offering; `costsched risk import FILE") in said(explained.stdout)


def test_a_gangs_assumed_rate_says_it_is_its_nodes_times_the_default(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    """Two nodes on spot: the rate shown is twice the cloud's default for one, said so."""
    path = tmp_path / "gang.yaml"
    path.write_text(TASK.format(accelerators="A10G:1").replace("name: sky\n",
                                                               "name: sky\nnum_nodes: 2\n"))
    result = cli("plan", path, "--top", "3", "--wide")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "spot │" in line]
    [cell] = {re.search(r"(\d\.\d{3})~", row)[1] for row in rows}
    note = re.search(r"the cloud's default \(aws ([\d.]+)/h a node x 2 nodes = ([\d.]+)/h\), "
                     "nothing published", said(result.stdout))
    assert note is not None, result.stdout
    assert note[2] == cell and f"{float(note[1]) * 2:.3f}" == cell  # as the table's cell
    one = json.loads(cli("plan", task(tmp_path), "--json",
                         "--top", "1").stdout)["rankings"][0]["ranking"][0]
    assert f"{one['preemptions_per_hour'] * 2:.3f}" == cell  # twice one node's default


def test_a_rate_that_is_not_assumed_is_not_marked(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "od.yaml"
    path.write_text("name: od\nresources:\n  accelerators: A10G:1\n  use_spot: false\n"
                    "run: python train.py\n")
    result = cli("plan", path, "--top", "3", "--wide")
    assert result.exit_code == 0, result.output
    assert "~" not in result.stdout and "assumed preemption rate" not in result.stdout
    doc = json.loads(cli("plan", path, "--json", "--top", "3").stdout)
    assert not any(r["preemption_rate_assumed"] for r in doc["rankings"][0]["ranking"])


def test_json_gives_no_figure_of_the_assumed_hour_as_the_jobs_own(
        cli, tmp_path: Path, cloud_launcher: str) -> None:  # noqa: ANN001
    doc = json.loads(cli("plan", task(tmp_path), "--json", "--top", "2").stdout)
    [job] = doc["jobs"]
    assert job["steps"] is None and job["work"]["steps"] is None  # was 3600.0
    assert job["work"]["assumed"] is True and job["work_assumed"] == job["work"]
    assert job["start_hours"] > 0  # the job's own start: a real figure
    base = job["baseline"]
    assert base["hours"] is None and base["cost"] is None
    assert base["usd_per_work_hour"] == base["assumed"]["cost"] > 0
    for row in doc["rankings"][0]["ranking"]:
        for key in ("steps_per_second", "work_hours", "start_hours", "start_cost",
                    "expected_hours", "expected_cost", "pessimistic_cost",
                    "budget_may_not_fit", "budget_does_not_fit"):
            assert row[key] is None, key
            assert key in row["assumed"]
        assert row["usd_per_work_hour"] == row["assumed"]["expected_cost"]
        assert row["speed_vs_reference"] == row["assumed"]["steps_per_second"] == 1.0


def test_explain_of_assumed_work_says_the_start_is_left_out_and_the_unit_is_no_speed(
        cli, tmp_path: Path, cloud_launcher: str) -> None:  # noqa: ANN001
    path = task(tmp_path, "{L4: 1, A10G: 1}")
    explained = cli("plan", path, "--explain", "aws us-west-2 g5.xlarge spot")
    assert explained.exit_code == 0, explained.output
    out = said(explained.stdout)
    assert "first start 0.00 h" not in out and "start 0.00 h" not in out
    assert ("left out of this per-work-hour figure: its start, 0.25 h to get an instance up "
            "and the job started = 10 min boot and "
            "set-up ([migration] restart_minutes) + 5 min warm-up") in out
    assert "comes on top, once, at the offering's $/h" in out
    assert "1 steps/s" not in out
    # the catalog's ratio alone, as no GPU's speed is known (the set's order changes none)
    assert "speed 1.435, the work done in an hour against 1xL4 (estimated)" in out
    assert "A10G against L4 (the unit of an assumed hour of work) x 1.44" in out


def test_an_env_named_like_a_secret_is_steered_to_secret(cli, tmp_path: Path) -> None:  # noqa: ANN001
    result = cli("plan", task(tmp_path), "--top", "1", "--wide")
    assert result.exit_code == 0, result.output
    out = said(result.stdout)
    assert "give --env HF_TOKEN" not in out
    assert ("move HF_TOKEN from envs: to secrets: in the task, then pass its value with "
            "--secret HF_TOKEN (named like a secret; an env's value is stored with the job, a "
            "secret's never is)") in out
