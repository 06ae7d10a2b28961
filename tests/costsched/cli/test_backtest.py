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


def test_jobs_from_job_specs(run, tmp_path: Path) -> None:
    rl = tmp_path / "rl.yaml"
    rl.write_text("name: rl\nmodel: a3c\nhours: 48\nreference_gpu: V100\n")
    resnet = tmp_path / "resnet.yaml"
    resnet.write_text("name: resnet\nmodel: ResNet-50 (batch size 128)\nsteps: 100000\n"
                      "checkpoint: {size_gb: 0.2}\n"
                      "constraints: {regions: [us-west-2], gpu_models: [V100]}\n")
    result = run("--jobs", rl, "--jobs", resnet, "--policies", "dynamic", *WINDOW, "--json")
    assert result.exit_code == 0, result.output
    runs = json.loads(result.output)["runs"]
    assert {(r["job"], r["region"]) for r in runs} == {("rl", "us-east-1"),
                                                       ("resnet", "us-west-2")}
    # The spec's constraints bind every policy: only V100s in us-west-2 for resnet.
    resnet_offerings = {r["first_offering"] for r in runs if r["job"] == "resnet"}
    resnet_offerings |= {r["last_offering"] for r in runs if r["job"] == "resnet"}
    assert resnet_offerings and all("us-west-2" in o and "p3." in o for o in resnet_offerings)


def test_the_example_job_specs_replay(run) -> None:
    examples = Path(__file__).resolve().parents[3] / "examples"
    result = run("--jobs", examples / "resnet50.yaml", "--jobs", examples / "recommendation.yaml",
                 *WINDOW, "--json")
    assert result.exit_code == 0, result.output
    runs = json.loads(result.output)["runs"]
    assert {r["job"] for r in runs} == {"resnet50", "recommendation"}
    assert all(r["cost_usd"] > 0 for r in runs)


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
    ("name: a\nmodel: A3C\nsteps: 5\ngpus: 2\n", "field gpus: unknown field"),
    ("name: a\nmodel: GPT-9\nsteps: 5\n", "field model: unknown model 'GPT-9'"),
    ("name: a\nmodel: A3C\nsteps: -2\n", "field steps"),
    ("name: a\nmodel: [\n", "invalid YAML"),
])
def test_bad_job_files_name_the_file_and_field(run, tmp_path: Path, text: str,
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
