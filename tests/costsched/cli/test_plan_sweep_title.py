"""A table several identical jobs share (a sweep's) says who they are once, and that its
work, deadline and budget hold for each job: a sweep's `budget:` caps each of its jobs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

AT = "2020-03-01T00:00Z"
SWEEP = ("name: mf-sweep\nrun: python train.py --lr $LR\nthroughputs: {V100: 20, K80: 5}\n"
         "steps: 2000\nsweep:\n  LR: [0.01, 0.05, 0.2]\n"
         "constraints: {budget: 10, deadline: 5m, markets: [spot]}\n")


def _title(output: str) -> str:
    """The first table's title, its wrapped lines joined."""
    head = output.split("┏", 1)[0]
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    return " ".join(line for line in lines if not line.startswith("no store"))


@pytest.fixture()
def plan(cli, recorded_store, monkeypatch):  # noqa: ANN001, ANN201
    monkeypatch.setenv("COLUMNS", "300")  # a title on one line

    def run(*args: str):  # noqa: ANN202
        return cli("plan", *args, "--at", AT, "--db", recorded_store.url)

    return run


def test_a_sweeps_title_names_the_sweep_once_and_each_jobs_budget(plan, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP.replace("deadline: 5m", "deadline: 6h"))
    result = plan(str(path), "--top", "2")
    assert result.exit_code == 0, result.output
    assert _title(result.stdout) == ("3 jobs of sweep mf-sweep (mf-sweep-1..3), 2,000 steps "
                                     "each; by cost, deadline 6 h each, budget $10.00 each")


def test_a_named_models_sweep_names_its_model(plan, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP.replace("throughputs: {V100: 20, K80: 5}",
                                  "model: ResNet-50 (batch size 64)")
                    .replace("deadline: 5m, ", ""))
    result = plan(str(path), "--top", "2")
    assert result.exit_code == 0, result.output
    assert _title(result.stdout) == ("3 jobs of sweep mf-sweep (mf-sweep-1..3): ResNet-50 "
                                     "(batch size 64), 2,000 steps each; by cost, budget "
                                     "$10.00 each")


def test_identical_jobs_not_of_a_sweep_are_listed(plan, tmp_path: Path) -> None:  # noqa: ANN001
    one = (SWEEP.split("sweep:")[0].replace("throughputs: {V100: 20, K80: 5}",
                                            "model: ResNet-50 (batch size 64)")
           + "constraints: {budget: 10, markets: [spot]}\n")
    paths = []
    for name in ("alpha", "beta"):
        paths.append(tmp_path / f"{name}.yaml")
        paths[-1].write_text(one.replace("name: mf-sweep", f"name: {name}"))
    result = plan(*map(str, paths), "--top", "2")
    assert result.exit_code == 0, result.output
    assert _title(result.stdout) == ("2 jobs (alpha, beta): ResNet-50 (batch size 64), 2,000 "
                                     "steps each; by cost, budget $10.00 each")


def test_one_jobs_title_is_as_it_was(plan, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "one.yaml"
    path.write_text(SWEEP.split("sweep:")[0] + "constraints: {budget: 5, markets: [spot]}\n")
    result = plan(str(path), "--top", "2")
    assert _title(result.stdout) == "mf-sweep, 2,000 steps; by cost, budget $5.00"


def test_a_sweeps_missed_deadline_reads_in_minutes(plan, tmp_path: Path,
                                                   cloud_launcher: str) -> None:  # noqa: ANN001
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP)
    result = plan(str(path))
    assert result.exit_code == 1
    line = re.sub(r"\s+", " ", result.output)
    assert "job mf-sweep-1 cannot meet its deadline of 5 min on any allowed offering" in line
    needs = re.search(r"needs ([\d.]+\*?) h", line)[1]
    assert f"it would meet a deadline at least {needs} h from now" in line
