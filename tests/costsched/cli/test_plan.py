"""`costsched plan` on the recorded prices: ranked tables, JSON, collections, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
AT = "2020-03-01T00:00Z"


@pytest.fixture()
def plan(cli, recorded_store):  # noqa: ANN001, ANN201
    def run(*args: str):  # noqa: ANN202
        return cli("plan", *args, "--at", AT, "--db", recorded_store.url)

    return run


def test_one_job_table(plan) -> None:  # noqa: ANN001
    result = plan(str(EXAMPLES / "recommendation.yaml"), "--top", "3")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for column in ("offering", "$/h", "steps/s", "hours", "total $", "vs OD V100"):
        assert column in out
    assert "p2.xlarge spot" in out and "baseline: on-demand 1xV100" in out
    assert "Collection plan" not in out


def test_json_ranking_is_sorted_and_constrained(plan) -> None:  # noqa: ANN001
    result = plan(str(EXAMPLES / "resnet50.yaml"), "--top", "5", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (job,) = doc["jobs"]
    (shared,) = doc["rankings"]
    assert shared["jobs"] == [job["name"]] and job["ranking_index"] == 0
    ranking = shared["ranking"]
    assert len(ranking) == 5
    costs = [r["expected_cost"] for r in ranking]
    assert costs == sorted(costs)
    assert all(r["region"] == "us-east-1" and r["market"] == "spot" for r in ranking)
    assert all(r["expected_hours"] <= 48 for r in ranking)
    assert ranking[0]["gpu_model"] == "V100"
    assert ranking[0]["vs_on_demand_v100"] < 0.5
    assert job["baseline"]["usd_per_hour"] == pytest.approx(3.06)
    assert shared["excluded"]["misses deadline"] > 0  # the K80s need more than 48 h


def test_objectives_and_overrides(plan) -> None:  # noqa: ANN001
    spec = str(EXAMPLES / "resnet50.yaml")
    fast = json.loads(plan(spec, "--objective", "time", "--json").stdout)["rankings"][0]
    assert fast["ranking"][0]["gpu_count"] == 8
    tight = plan(spec, "--objective", "time", "--budget", "15", "--json")
    capped = json.loads(tight.stdout)["rankings"][0]["ranking"]
    assert all(r["expected_cost"] <= 15 for r in capped)
    assert capped[0]["expected_hours"] > fast["ranking"][0]["expected_hours"]
    result = plan(spec, "--deadline", "2h")
    assert result.exit_code == 1
    assert "cannot meet its deadline of 2 h" in result.output
    assert "p3.16xlarge" in result.output  # the fastest offering, named


def test_several_jobs_get_a_collection_plan(plan) -> None:  # noqa: ANN001
    result = plan(str(EXAMPLES / "resnet50.yaml"), str(EXAMPLES / "recommendation.yaml"),
                  "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    collection = data["collection"]
    assert collection["status"] == "optimal" and collection["policy"] == "min_cost"
    by_job = {a["job"]: a for a in collection["assignment"]}
    # Without quotas each job gets its own cheapest offering.
    for job in data["jobs"]:
        ranking = data["rankings"][job["ranking_index"]]["ranking"]
        assert by_job[job["name"]]["offering"] == ranking[0]["offering"]
    text = plan(str(EXAMPLES / "sweep.yaml"), "--quota", "1").stdout
    assert "Collection plan (min_cost): 6 jobs" in text


def test_collection_budget_shortfall_is_reported(plan) -> None:  # noqa: ANN001
    result = plan(str(EXAMPLES / "sweep.yaml"), "--objective", "time", "--budget", "1")
    assert result.exit_code == 1
    assert "budget: the cheapest placement" in result.output and "more than the budget of $1.00" \
        in result.output


def test_bad_yaml_is_one_line_exit_2(cli, tmp_path: Path) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmodel: A3C\nsteps: 10\nconstraints:\n  markets: [cheap]\n")
    result = cli("plan", str(bad))
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1
    assert str(bad) in lines[0] and "constraints.markets" in lines[0]
    assert "on-demand, spot" in lines[0]
    assert cli("plan", str(tmp_path / "missing.yaml")).exit_code == 2
    assert cli("plan", str(EXAMPLES / "resnet50.yaml"), "--objective", "fun").exit_code == 2


def test_measured_availability_changes_spot_risk(plan, dispa: Path) -> None:  # noqa: ANN001
    log = dispa / "aws" / "availability" / "persistent_2020-03-15.out"
    result = plan(str(EXAMPLES / "recommendation.yaml"), "--availability", str(log), "--json")
    ranking = json.loads(result.stdout)["rankings"][0]["ranking"]
    k80 = next(r for r in ranking if r["instance_type"] == "p2.xlarge")
    assert k80["preemption_basis"].startswith("measured")
    assert k80["preemptions_per_hour"] > 0.15
    assert k80["expected_hours"] > k80["work_hours"]


def test_a_sweeps_json_writes_its_shared_ranking_once(plan) -> None:  # noqa: ANN001
    result = plan(str(EXAMPLES / "sweep.yaml"), "--top", "3", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (shared,) = doc["rankings"]
    names = [j["name"] for j in doc["jobs"]]
    assert shared["jobs"] == names and len(names) == 6
    assert {j["ranking_index"] for j in doc["jobs"]} == {0}
    best = shared["ranking"][0]["offering"]
    assert result.stdout.count(f'"offering": "{best}"') == 1 + len(names)  # + assignment


def test_plan_json_is_written_piece_by_piece(monkeypatch, recorded_store) -> None:  # noqa: ANN001
    """No write holds the whole document: a sweep's jobs are written one by one."""
    import io
    import sys

    from costsched.cli.common import stream_json
    from costsched.cli.plan_json import plan_json
    from costsched.service import plan as plan_jobs

    writes: list[str] = []

    class Recorder(io.StringIO):
        def write(self, text: str) -> int:
            writes.append(text)
            return super().write(text)

    result = plan_jobs(recorded_store, EXAMPLES / "sweep.yaml", at=AT)
    out = Recorder()
    monkeypatch.setattr(sys, "stdout", out)
    stream_json(plan_json(result, top=10, stale_after=168.0))
    doc = json.loads(out.getvalue())
    assert len(doc["jobs"]) == 6 and len(doc["rankings"]) == 1
    assert sum(w.count('"ranking_index"') for w in writes) == 6
    assert all(w.count('"ranking_index"') <= 1 for w in writes)  # one job per write at most


def test_the_baseline_is_written_at_the_precision_of_the_tables_hours_and_totals(
        plan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """A job of minutes (its start too: no boot, no warm-up): its table reads 0.00xx h and
    $0.00xx, and so does the on-demand baseline set under it, never 0.02 h and $0.05
    beside them."""
    config = tmp_path / "config.toml"
    config.write_text("[migration]\nwarmup_minutes = 0\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    job = tmp_path / "short.yaml"
    job.write_text("name: short\nrun: python train.py\nthroughputs: {V100: 20, K80: 5}\n"
                   "steps: 400\ncheckpoint: {restart_minutes: 0}\n")
    result = plan(str(job), "--top", "3")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if "baseline:" in x)
    # hours x price = cost, each as the table's column writes it
    hours_text, cost_text = re.search(r", ([\d.]+\*?) h x \$[\d.]+/h = (\$[\d.]+\*?)",
                                      line).groups()
    # At least the table's decimals; more where the product needs them to read as the cost.
    assert len(hours_text.strip("*").split(".")[1]) >= 4, line
    assert len(cost_text.strip("*$").split(".")[1]) == 4, line


@pytest.mark.parametrize(("option", "says"), [
    (["--budget", "-5"], "error: --budget -5: expected a positive amount of USD"),
    (["--deadline", "1s"], "error: --deadline: '1s': expected hours (48, '36h', '2d', '90m') "
                           "or an ISO time (2020-03-03T00:00Z)"),
    (["--emit", "skypilot"], "error: --emit 'skypilot': expected sky; did you mean 'sky'?"),
    (["--objective", "cheapest"], "error: --objective 'cheapest': expected one of cost, "
                                  "time, tradeoff, throughput-per-dollar; did you mean "
                                  "'cost'?"),
])
def test_a_bad_option_is_refused_in_one_line_before_the_files_are_read(
        cli, tmp_path: Path, option: list[str], says: str) -> None:  # noqa: ANN001
    """Refused first: the job file named does not even exist, and nothing but the line is
    written (no bar's leftover blank line)."""
    result = cli("plan", str(tmp_path / "missing.yaml"), *option)
    assert result.exit_code == 2
    assert result.output == says + "\n"


def test_an_objective_in_any_case_is_the_objective(plan) -> None:  # noqa: ANN001
    """'Time' is accepted as time, and ranks by time (not silently by cost)."""
    result = plan(str(EXAMPLES / "resnet50.yaml"), "--top", "2", "--objective", "Time")
    assert result.exit_code == 0, result.output
    assert "; by time" in result.stdout


def test_a_gangs_baseline_is_the_gang_on_on_demand_v100s(plan, tmp_path: Path,
                                                         cloud_launcher: str) -> None:  # noqa: ANN001
    """A job of 2 nodes is priced at 2 instances an hour on every offering; its baseline
    too (2 nodes x 1xV100 at twice the price), so 'vs OD V100' compares like with like."""
    job = tmp_path / "pair.yaml"
    job.write_text("name: pair\nrun: python train.py\nthroughputs: {V100: 20, K80: 5}\n"
                   "steps: 36000\nnum_nodes: 2\n")
    one = tmp_path / "one.yaml"
    one.write_text(job.read_text().replace("num_nodes: 2\n", ""))
    [pair] = json.loads(plan(str(job), "--json").stdout)["jobs"]
    [alone] = json.loads(plan(str(one), "--json").stdout)["jobs"]
    assert pair["baseline"]["basis"] == "on-demand 2 nodes x 1xV100 in the price frame"
    assert pair["baseline"]["usd_per_hour"] == pytest.approx(
        2 * alone["baseline"]["usd_per_hour"])
    # Its hours are the job's work and its start, a gang's with its nodes' rendezvous (3 min).
    assert pair["baseline"]["hours"] == pytest.approx(alone["baseline"]["hours"] + 3 / 60)
    assert pair["start_hours"] == pytest.approx(alone["start_hours"] + 3 / 60)
    assert pair["baseline"]["cost"] == pytest.approx(
        2 * alone["baseline"]["usd_per_hour"] * pair["baseline"]["hours"])


def test_a_gangs_plan_says_its_speed_is_the_gangs(plan, tmp_path: Path) -> None:  # noqa: ANN001
    """A job of 2 nodes is planned at its `throughputs:` figure as the gang's pace, never
    one node's times 2: one line under the table says so; one node's plan says nothing."""
    job = tmp_path / "pair.yaml"
    job.write_text("name: pair\nrun: python train.py\nthroughputs: {V100: 20}\n"
                   "steps: 36000\nnum_nodes: 2\nconstraints: {gpu_models: [V100]}\n")
    result = plan(str(job), "--top", "2")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert ("2 nodes: 20 steps/s on V100 is the gang's pace, all 2 nodes together, as "
            "`throughputs: {V100: ...}` gives it (never one node's times 2): give the "
            "gang's measured pace there") in said, said
    one = tmp_path / "one.yaml"
    one.write_text(job.read_text().replace("num_nodes: 2\n", ""))
    assert "the gang's pace" not in plan(str(one), "--top", "2").stdout
