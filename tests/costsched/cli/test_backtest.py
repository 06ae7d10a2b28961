"""`costsched backtest` on the recorded traces: table, JSON, chart, YAML jobs, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.backtest import REPLAY_POLICIES
from costsched.cli import app
from costsched.service.backtest import RUN_KEYS, SUMMARY_KEYS, TOP_KEYS

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
    assert "Cost reduction vs cheapest-hourly" in result.output
    for word in ("A3C", "CycleGAN", "us-west-2", "multi-cloud", "dynamic-aware", "oracle"):
        assert word in result.output
    assert f"0 of {2 * 2 * 3 * len(REPLAY_POLICIES)} runs ran past" in result.output
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_has_summary_runs_and_assumptions(run) -> None:
    result = run("--models", "A3C", "--policies", "multi-cloud,oracle", *WINDOW, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {r["policy"] for r in data["runs"]} == {"static", "cheapest-hourly", "multi-cloud",
                                                   "oracle"}
    assert len(data["runs"]) == 12
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
    (["--days", "0"], "--days 0: expected a positive number"),
    (["--restart-minutes", "-1"], "--restart-minutes -1: expected a finite number >= 0"),
    (["--margin", "-0.50"], "--margin -0.50: expected a finite number >= 0"),
    (["--checkpoint-gb", "-1e3"], "--checkpoint-gb -1e3: expected a finite number >= 0"),
    (["--period-hours", "0"], "--period-hours 0: expected a positive number of hours"),
    (["--days", "inf"], "--days inf: expected a finite number"),
    (["--days", "nan"], "--days nan: expected a finite number"),
    (["--period-hours", "inf"], "--period-hours inf: expected a finite number"),
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


def test_json_keeps_its_documented_schema(run) -> None:
    result = run("--models", "A3C", "--policies", "dynamic", *WINDOW, "--json")
    data = json.loads(result.output)
    # The documented keys (service.backtest.JSON_SCHEMA); changing them breaks scripts.
    assert tuple(data) == TOP_KEYS == (
        "schema_version", "window", "migration_costs", "margin", "share_instances",
        "baselines", "summary", "runs")
    assert data["schema_version"] == 1
    assert data["baselines"] == ["static", "cheapest-hourly"]
    assert set(data["window"]) == {"first_start", "last_start", "starts", "every_hours",
                                   "trace_end", "period_hours"}
    assert all(tuple(r) == SUMMARY_KEYS for r in data["summary"])
    assert {"model", "region", "policy", "reduction", "reduction_vs_cheapest_hourly",
            "runs", "migrations"} <= set(SUMMARY_KEYS)
    assert all(tuple(r) == RUN_KEYS for r in data["runs"])
    assert {"policy", "model", "region", "start", "cost_usd", "hours", "migrations",
            "preemptions", "reduction", "reduction_vs_cheapest_hourly"} <= set(RUN_KEYS)
    runs = {r["policy"]: r for r in data["runs"] if r["start"].startswith("2020-02-24")}
    assert runs["dynamic"]["reduction_vs_cheapest_hourly"] == (
        runs["cheapest-hourly"]["cost_usd"] / runs["dynamic"]["cost_usd"])


def test_csv_has_every_run_with_both_baselines(run, tmp_path: Path) -> None:
    import pandas as pd

    path = tmp_path / "[bold]runs.csv"
    result = run("--models", "A3C", "--policies", "dynamic", *WINDOW, "--csv", path)
    assert result.exit_code == 0, result.output
    assert f"written to {path}" in result.output.replace("\n", "")  # shown literally
    frame = pd.read_csv(path)
    assert len(frame) == 3 * 3
    assert {"reduction", "reduction_vs_cheapest_hourly", "preemptions", "jobs"} <= set(
        frame.columns)
    static = frame[frame["policy"] == "static"]
    assert static["reduction"].tolist() == [1.0] * 3


def test_an_unwritable_csv_path_is_one_line(run, tmp_path: Path) -> None:
    result = run("--models", "A3C", "--policies", "static", *WINDOW, "--csv", tmp_path)
    assert result.exit_code == 2
    assert f"{tmp_path}: cannot write it" in result.output and "Traceback" not in result.output


def test_an_empty_sweep_is_one_line(run, tmp_path: Path) -> None:
    spec = tmp_path / "sweep.yaml"
    spec.write_text("name: s\nmodel: A3C\nsteps: 1000\nsweep:\n  LR: []\n")
    result = run("--jobs", spec, *WINDOW)
    assert result.exit_code == 2, result.output
    assert "field sweep.LR: an empty list: expected at least one value" in result.output
    assert str(spec) in result.output


def test_a_big_sweep_replays_once_per_distinct_job(run, tmp_path: Path) -> None:
    spec = tmp_path / "sweep.yaml"
    lrs = ", ".join(str(i) for i in range(50))
    spec.write_text("name: s\nmodel: A3C\nhours: 24\nreference_gpu: V100\n"
                    f"sweep:\n  LR: [{lrs}]\n  SEED: [1, 2]\n")
    result = run("--jobs", spec, "--policies", "dynamic", *WINDOW, "--json")
    runs = json.loads(result.output)["runs"]
    assert len(runs) == 3 * 3 and {r["jobs"] for r in runs} == {100}
    assert {r["job"] for r in runs} == {"s-1"}
    table = run("--jobs", spec, "--policies", "dynamic", *WINDOW)
    assert "9 replays stand for 900 runs" in table.output


def test_shared_instances_reach_the_published_transformer_figure(run) -> None:
    # The published analysis of these traces (one GPU of a multi-GPU instance priced per
    # GPU, moves free): dynamic 3.21x cheaper than static, Transformer from us-east-1.
    result = run("--models", "Transformer (batch size 256)", "--policies", "dynamic",
                 "--first-start", "2020-02-18", "--starts", "30", "--free-migrations",
                 "--share-instances", "--json")
    data = json.loads(result.output)
    assert data["share_instances"] is True
    summary = {r["policy"]: r for r in data["summary"]}
    assert summary["dynamic"]["reduction"] == pytest.approx(3.21, rel=0.03)
    assert any("[1/" in r["last_offering"] for r in data["runs"] if r["policy"] == "dynamic")
    # static and cheapest-hourly rent whole instances.
    assert not any("[1/" in r["last_offering"] for r in data["runs"]
                   if r["policy"] in ("static", "cheapest-hourly"))
    plain = run("--models", "Transformer (batch size 256)", "--policies", "dynamic",
                "--first-start", "2020-02-18", "--starts", "30", "--free-migrations", "--json")
    unshared = {r["policy"]: r for r in json.loads(plain.output)["summary"]}
    assert unshared["dynamic"]["reduction"] < summary["dynamic"]["reduction"] * 0.9


def test_the_example_sweep_replays_as_a_collection_on_shared_instances(run) -> None:
    sweep = Path(__file__).resolve().parents[3] / "examples" / "sweep.yaml"
    out = run("--collection", "--jobs", sweep, "--starts", 2,
              "--first-start", "2020-02-20", "--share-instances", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    by = {row["approach"]: row for row in data["summary"]}
    assert set(by) == {"collection", "alone", "alone-daily", "cheapest-hourly"}
    assert all(row["deadline_misses"] == 0 for row in by.values())
    # Four of the six 1-GPU jobs share a 4xV100 instance: cheaper than each alone.
    assert by["collection"]["cost_usd"] < by["alone"]["cost_usd"]
    assert by["collection"]["shared_instances"] > 0
