"""Every `--json` is exactly one JSON document on stdout, whatever the solver or a library
prints: the CLI's output is parsed, and the process's own stdout (file descriptor 1, where
C code writes) must stay empty. A fresh process checks the solver's banner, which HiGHS
prints once per process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.report.scenario import fill

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
AT = "2020-03-01T00:00Z"
TWO_JOBS = [str(EXAMPLES / "resnet50.yaml"), str(EXAMPLES / "recommendation.yaml")]
WINDOW = ["--first-start", "2020-02-24", "--starts", "2", "--every-hours", "48"]

# Commands reading the recorded 2020 prices ({db}), in-process.
ON_RECORDED = {
    "plan one job": ["plan", TWO_JOBS[0], "--at", AT, "--top", "2"],
    "plan a collection": ["plan", *TWO_JOBS, "--at", AT, "--top", "2"],
    "backtest": ["backtest", "--models", "A3C", "--policies", "dynamic", *WINDOW],
    "prices show": ["prices", "show", "--at", AT, "--top", "3"],
    "prices history": ["prices", "history", "--instance", "p3.2xlarge", "--since",
                       "2020-02-28", "--until", AT],
    "prices availability": ["prices", "availability"],
}
# Commands on a store of their own, in-process; `report` on one with jobs and placements.
ON_OWN_STORE = {
    "catalog": ["catalog"],
    "config show": ["config", "show"],
    "throughput show": ["throughput", "show", "--model", "ResNet-50 (batch size 64)"],
    "throughput set": ["throughput", "set", "Mine", "V100", "2.5"],
    "prices import": ["prices", "import", str(EXAMPLES / "demo" / "prices-before.csv")],
    "prices export": ["prices", "export", "{tmp}/out.csv"],
    "status": ["status"],
    "daemon status": ["daemon", "status"],
    "daemon start": ["daemon", "start"],
    "migrate": ["migrate", "--dry-run"],
    "report": ["report", "--until", "2024-06-02T02:00Z"],
}


def run_json(argv: list[str], capfd: pytest.CaptureFixture[str]) -> object:
    result = CliRunner().invoke(app, [*argv, "--json"], catch_exceptions=False)
    leaked = capfd.readouterr().out
    assert result.exit_code in (0, 1), result.output
    assert leaked == "", f"written to stdout outside the command's output: {leaked[:200]!r}"
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", sorted(ON_RECORDED))
def test_json_on_recorded_prices(name: str, recorded_store: PriceStore,
                                 capfd: pytest.CaptureFixture[str]) -> None:
    run_json([*ON_RECORDED[name], "--db", recorded_store.url], capfd)


@pytest.mark.parametrize("name", sorted(ON_OWN_STORE))
def test_json_on_a_store_of_its_own(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capfd: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "store.sqlite"
    store = PriceStore(str(db))
    if name == "report":
        fill(store)
    store.dispose()
    monkeypatch.setenv("COSTSCHED_DB", str(db))
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    monkeypatch.setenv("COSTSCHED_THROUGHPUTS", str(tmp_path / "throughputs.csv"))
    run_json([a.replace("{tmp}", str(tmp_path)) for a in ON_OWN_STORE[name]], capfd)


def fresh_process(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=False)


def test_a_collection_plan_prints_one_document_in_a_fresh_process(
        recorded_store: PriceStore) -> None:
    """The solver runs first in this process: its banner would lead stdout."""
    code = ("import sys\nfrom costsched.cli import app\n"
            f"app({['plan', *TWO_JOBS, '--at', AT, '--db', recorded_store.url, '--json']!r})")
    done = fresh_process(code)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["collection"]["solver"] and len(document["jobs"]) == 2


def test_the_python_api_prints_nothing(recorded_store: PriceStore) -> None:
    code = ("import costsched\n"
            f"result = costsched.plan({TWO_JOBS!r}, at={AT!r}, db={recorded_store.url!r})\n"
            "assert result.collection is not None and len(result.table) == 2\n"
            f"costsched.prices_as_of(at={AT!r}, db={recorded_store.url!r})\n")
    done = fresh_process(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


@pytest.fixture()
def own_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty store named by COSTSCHED_DB, local instances and throughputs of its own."""
    db = tmp_path / "store.sqlite"
    PriceStore(str(db)).dispose()
    monkeypatch.setenv("COSTSCHED_DB", str(db))
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    monkeypatch.setenv("COSTSCHED_THROUGHPUTS", str(tmp_path / "throughputs.csv"))
    return db


def test_collect_json(own_store: Path, azure_prices: object,
                      capfd: pytest.CaptureFixture[str]) -> None:
    summary = run_json(["collect", "--cloud", "azure"], capfd)
    assert summary["ok"] is True and summary["inserted"] > 0


def test_daemon_once_json(own_store: Path, azure_prices: object, tmp_path: Path,
                          capfd: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[collect]\nclouds = ["azure"]\n')
    runs = run_json(["daemon", "--once", "--config", str(config)], capfd)
    assert [r["task"] for r in runs] == ["collect", "replan", "catalog"]


def test_launch_and_stop_json(own_store: Path, tmp_path: Path,
                              capfd: pytest.CaptureFixture[str]) -> None:
    """A trivial job on the local launcher: launched, then stopped, each one document."""
    assert CliRunner().invoke(app, ["prices", "import", str(EXAMPLES / "demo" /
                                                            "prices-before.csv")]).exit_code == 0
    spec = tmp_path / "sleeper.yaml"
    spec.write_text(f"name: sleeper\nrun: {sys.executable} -c 'import time; time.sleep(60)'\n"
                    "throughputs: {V100: 1.0}\nsteps: 1000\n"
                    "constraints: {regions: [us-east-1], markets: [spot]}\n")
    (launched,) = run_json(["launch", str(spec), "--wait", "30"], capfd)
    assert launched["name"] == "sleeper" and launched["placement"]["market"] == "spot"
    stopped = run_json(["stop", "sleeper"], capfd)
    assert stopped == {"id": launched["id"], "name": "sleeper", "state": "stopped"}


def test_backtest_deadline_json(own_store: Path, capfd: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    from tests.costsched.backtest.deadline.traces import intervals, trace
    from tests.costsched.service.test_deadline import ZONES

    store = PriceStore(str(own_store))
    rng = np.random.default_rng(5)
    store.spot_availability.add(intervals(trace(np.repeat(rng.random((3, 80)) < 0.6, 6,
                                                          axis=1), ZONES, 60)))
    store.dispose()
    document = run_json(["backtest-deadline", "--deadline", "2.5", "--job-hours", "2",
                         "--restart-minutes", "3", "--checkpoint-minutes", "10", "--starts",
                         "2"], capfd)
    assert document["trace"]["zones"] == ZONES
    policies = {"on-demand", "greedy", "uniform-progress", "spot-hedge", "spot-anywhere",
                "spot-risk", "optimum"}
    assert {r["policy"] for r in document["summary"]} == policies
    assert len(document["runs"]) == len(policies) * 2 * 3  # policies x starts x homes
