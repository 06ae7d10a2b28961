"""Plans that nothing can fill: a region no price has (af-south-1, a listed region; one no
cloud has is refused with the file), a time before any price, filters that match nothing.
Each job gets one line naming what matched nothing and what exists; the planner never
raises, and the command exits 1 when no job has a plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from costsched.service import plan

AT = "2020-03-01T00:00Z"


def spec(tmp_path: Path, name: str, **constraints: object) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "model": "ResNet-50 (batch size 64)",
                                    "steps": 20000, "constraints": constraints}))
    return path


@pytest.mark.parametrize(("constraints", "said"), [
    ({"regions": ["af-south-1"]}, "region af-south-1"),
    ({"clouds": ["aws"], "regions": ["us-east-1"], "gpu_models": ["H100"],
      "markets": ["spot"]}, "GPU model H100"),
    ({"clouds": ["aws"], "gpu_counts": [3]}, "GPU count 3"),
])
def test_a_filter_that_matches_nothing_is_named_with_what_exists(
        recorded_store, tmp_path: Path, constraints: dict, said: str) -> None:  # noqa: ANN001
    result = plan(recorded_store, spec(tmp_path, "j", **constraints), at=AT)
    assert not result.ok
    reason = result.jobs[0].reason
    assert reason.startswith("job j: ") and said in reason
    priced = reason.split("priced: ")[1]  # the values that do exist, from the store
    column = {"region": "region", "GPU model": "gpu_model", "GPU count": "gpu_count"}[
        said.rsplit(" ", 1)[0]]
    existing = set(map(str, recorded_store.as_of(AT, os="linux")[column]))
    assert set(priced.split(", ")) & existing
    assert result.table["reason"].iloc[0] == reason


def test_a_time_before_any_price(recorded_store, tmp_path: Path) -> None:  # noqa: ANN001
    result = plan(recorded_store, spec(tmp_path, "early"), at="2001-01-01T00:00Z")
    assert not result.ok
    assert "no offering has a price as of 2001-01-01T00:00Z" in result.jobs[0].reason


def test_cli_one_line_per_job_and_exit_1(cli, recorded_store, tmp_path: Path) -> None:  # noqa: ANN001
    jobs = [spec(tmp_path, f"cape{i}", regions=["af-south-1"]) for i in range(3)]
    result = cli("plan", *jobs, "--at", AT, "--db", recorded_store.url)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if "region af-south-1" in line]
    assert [line.split(": ")[1] for line in lines[:3]] == ["job cape0", "job cape1", "job cape2"]


def test_some_jobs_planned_others_not(cli, recorded_store, tmp_path: Path) -> None:  # noqa: ANN001
    good = spec(tmp_path, "good", clouds=["aws"], regions=["us-east-1"])
    bad = spec(tmp_path, "bad", regions=["af-south-1"])
    result = cli("plan", good, bad, "--at", AT, "--db", recorded_store.url, "--json")
    assert "Traceback" not in result.output
    doc = json.loads(result.stdout)
    jobs = {j["name"]: j for j in doc["jobs"]}
    ranked = {n: doc["rankings"][j["ranking_index"]]["ranking"] for n, j in jobs.items()}
    assert jobs["good"]["reason"] is None and ranked["good"]
    assert "region af-south-1" in jobs["bad"]["reason"] and not ranked["bad"]
