"""`costsched backtest` on the recorded traces: table, JSON, chart, YAML jobs, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app

WINDOW = ["--first-start", "2020-02-24", "--starts", "3", "--every-hours", "48"]


@pytest.fixture()
def run(recorded_store):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, ["backtest", "--db", recorded_store.url, *map(str, args)],
                             catch_exceptions=False)

    return invoke


def test_table_of_reductions_and_chart(run, tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    result = run("--models", "A3C,CycleGAN", "--region", "us-east-1,us-west-2", *WINDOW,
                 "--plot", chart)
    assert result.exit_code == 0, result.output
    assert "Cost reduction vs static" in result.output
    for word in ("A3C", "CycleGAN", "us-west-2", "multi-cloud", "dynamic-aware", "oracle"):
        assert word in result.output
    assert "0 of 84 runs ran past" in result.output
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_has_summary_runs_and_assumptions(run) -> None:
    result = run("--models", "A3C", "--policies", "multi-cloud,oracle", *WINDOW, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {r["policy"] for r in data["runs"]} == {"static", "multi-cloud", "oracle"}
    assert len(data["runs"]) == 9
    assert data["migration_costs"]["egress_usd_per_gb"]["aws"]["internet"] == 0.09
    oracle = [r for r in data["summary"] if r["policy"] == "oracle"][0]
    assert oracle["reduction"] >= 1.0
    assert data["window"]["first_start"].startswith("2020-02-24")


def test_jobs_from_yaml(run, tmp_path: Path) -> None:
    spec = tmp_path / "jobs.yaml"
    spec.write_text("jobs:\n  - name: rl\n    model: a3c\n    days: 2\n"
                    "  - model: ResNet-50 (batch size 128)\n    steps: 100000\n"
                    "    region: us-west-2\n    checkpoint_gb: 0.2\n")
    result = run("--jobs", spec, "--policies", "dynamic", *WINDOW, "--json")
    assert result.exit_code == 0, result.output
    runs = json.loads(result.output)["runs"]
    assert {r["job"] for r in runs} == {"rl", "ResNet-50 (batch size 128)"}
    assert {r["region"] for r in runs} == {"us-east-1", "us-west-2"}


@pytest.mark.parametrize(("args", "message"), [
    (["--policies", "cheapest"], "unknown policy 'cheapest': expected one of static"),
    (["--models", "GPT-9"], "unknown model 'GPT-9'"),
    (["--region", "mars-1"], "region 'mars-1': no prices stored"),
    (["--days", "0"], "--days 0.0: expected a positive number"),
    (["--restart-minutes", "-1"], "--restart-minutes -1.0: expected a number >= 0"),
])
def test_bad_options_are_one_line_errors(run, args: list[str], message: str) -> None:
    result = run(*args, *WINDOW)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("text", "message"), [
    ("jobs: []\n", "expected a list of jobs"),
    ("- model: A3C\n  days: 1\n  gpus: 2\n", "job 1: unknown field(s) gpus"),
    ("- days: 1\n", "job 1: field model is missing"),
    ("- model: A3C\n  days: 1\n  steps: 5\n", "exactly one of days (V100-days) or steps"),
    ("- model: A3C\n  days: -2\n", "job 1: field days -2: expected a positive number"),
    ("- model: [\n", "not valid YAML"),
])
def test_bad_job_files_name_the_file_job_and_field(run, tmp_path: Path, text: str,
                                                   message: str) -> None:
    spec = tmp_path / "jobs.yaml"
    spec.write_text(text)
    result = run("--jobs", spec, *WINDOW)
    assert result.exit_code == 2, result.output
    assert str(spec) in result.output.replace("\n", "") and message in result.output


def test_free_migrations_charge_nothing_for_moves(run) -> None:
    result = run("--models", "Transformer (batch size 256)", "--policies", "dynamic",
                 *WINDOW, "--free-migrations", "--json")
    data = json.loads(result.output)
    assert data["migration_costs"]["restart_minutes"] == 0
    assert all(r["migration_usd"] == 0 for r in data["runs"])
