"""A sweep of thousands of jobs plans end to end: every job gets its plan in the result,
the collection places every job, and `--json` lists every job (no timing asserted here:
bench/bench_plan_sweep.py measures it, on the 10,000 jobs of launch.max_sweep_jobs). 2,500
jobs here: far past the plan's one-table-per-job and indented-JSON sizes, as 10,000 are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from costsched.service import plan

AT = "2020-03-01T00:00Z"
SIDE = 50  # learning rates and seeds: SIDE**2 jobs
JOBS = SIDE * SIDE
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/sweep.yaml with 50 learning rates x 50 seeds."""
    spec = yaml.safe_load((EXAMPLES / "sweep.yaml").read_text())
    spec["sweep"] = {"LR": [round(1e-4 * (i + 1), 6) for i in range(SIDE)],
                     "SEED": list(range(SIDE))}
    path = tmp_path_factory.mktemp("sweep") / "big.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_every_job_planned_and_placed(recorded_store, sweep: Path) -> None:  # noqa: ANN001
    result = plan(recorded_store, sweep, at=AT)
    names = {f"transformer-sweep-{i}" for i in range(1, JOBS + 1)}
    assert result.ok
    assert set(result.table["job"]) == names and result.table["offering"].notna().all()
    assignment = result.collection.assignment
    assert set(assignment["job"]) == names
    # Identical jobs, no quota: each is placed on the cheapest offering of its own ranking.
    best = result.ranking(0).iloc[0]
    assert (assignment["offering"] == best["offering"]).all()
    # A collection's total is its jobs' rankings' figures, first start included (a
    # re-plan of jobs that run already charges them none: `Workload.running`).
    assert result.collection.total_cost == pytest.approx(JOBS * best["expected_cost"])
    assert result.collection.objective == pytest.approx(result.collection.total_cost)


def test_json_lists_every_job_and_text_is_one_summary(cli, recorded_store,  # noqa: ANN001
                                                      sweep: Path) -> None:
    out = cli("plan", sweep, "--at", AT, "--db", recorded_store.url, "--json", "--top", "2")
    assert out.exit_code == 0
    data = json.loads(out.stdout)
    assert len(data["jobs"]) == JOBS == len(data["collection"]["assignment"])
    assert {j["name"] for j in data["jobs"]} == {f"transformer-sweep-{i}"
                                                  for i in range(1, JOBS + 1)}
    assert {j["ranking_index"] for j in data["jobs"]} == {0}  # one ranking, written once
    (shared,) = data["rankings"]
    assert len(shared["ranking"]) == 2 and len(shared["jobs"]) == JOBS
    text = cli("plan", sweep, "--at", AT, "--db", recorded_store.url)
    assert text.exit_code == 0
    assert f"{JOBS:,} jobs in 1 group" in text.stdout
    assert text.stdout.count("transformer-sweep-") == 2  # first ... last, not 2,500 tables
