"""A 10,000-job sweep plans end to end: every job gets its plan in the result, the
collection places every job, and `--json` lists every job (no timing asserted here:
bench/bench_plan_sweep.py measures it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from costsched.service import plan

AT = "2020-03-01T00:00Z"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/sweep.yaml with 100 learning rates x 100 seeds."""
    spec = yaml.safe_load((EXAMPLES / "sweep.yaml").read_text())
    spec["sweep"] = {"LR": [round(1e-4 * (i + 1), 6) for i in range(100)],
                     "SEED": list(range(100))}
    path = tmp_path_factory.mktemp("sweep") / "big.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_every_job_planned_and_placed(recorded_store, sweep: Path) -> None:  # noqa: ANN001
    result = plan(recorded_store, sweep, at=AT)
    names = {f"transformer-sweep-{i}" for i in range(1, 10_001)}
    assert result.ok
    assert set(result.table["job"]) == names and result.table["offering"].notna().all()
    assignment = result.collection.assignment
    assert set(assignment["job"]) == names
    # Identical jobs, no quota: each is placed on the cheapest offering of its own ranking.
    best = result.ranking(0).iloc[0]
    assert (assignment["offering"] == best["offering"]).all()
    assert result.collection.total_cost == pytest.approx(10_000 * best["expected_cost"])
    assert result.collection.objective == pytest.approx(result.collection.total_cost)


def test_json_lists_every_job_and_text_is_one_summary(cli, recorded_store,  # noqa: ANN001
                                                      sweep: Path) -> None:
    out = cli("plan", sweep, "--at", AT, "--db", recorded_store.url, "--json", "--top", "2")
    assert out.exit_code == 0
    data = json.loads(out.stdout)
    assert len(data["jobs"]) == 10_000 == len(data["collection"]["assignment"])
    assert {j["name"] for j in data["jobs"]} == {f"transformer-sweep-{i}"
                                                  for i in range(1, 10_001)}
    assert {j["ranking_index"] for j in data["jobs"]} == {0}  # one ranking, written once
    (shared,) = data["rankings"]
    assert len(shared["ranking"]) == 2 and len(shared["jobs"]) == 10_000
    text = cli("plan", sweep, "--at", AT, "--db", recorded_store.url)
    assert text.exit_code == 0
    assert "10,000 jobs in 1 groups" in text.stdout
    assert text.stdout.count("transformer-sweep-") == 2  # first ... last, not 10,000 tables
