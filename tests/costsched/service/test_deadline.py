"""The deadline backtest over a store's availability, and its command."""

from __future__ import annotations

import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from costsched.cli.deadline import deadline_backtest_cmd
from costsched.model import InvalidInput
from costsched.service.deadline import deadline_backtest
from tests.costsched.backtest.deadline.traces import intervals, trace

ZONES = ["us-east-1a", "us-east-1b", "us-west-2a"]


@pytest.fixture()
def availability_store(store):
    rng = np.random.default_rng(5)
    t = trace(np.repeat(rng.random((3, 80)) < 0.6, 6, axis=1), ZONES, 60)
    store.spot_availability.add(intervals(t))
    return store


def test_every_policy_and_the_optimum_per_setting(availability_store) -> None:
    result = deadline_backtest(availability_store, job_hours=2, deadline_hours=(2.5, 3),
                               restart_minutes=(3,), checkpoint_minutes=10, starts=4)
    summary = result.summary
    assert set(summary["policy"]) == {"on-demand", "greedy", "uniform-progress",
                                      "spot-anywhere", "spot-risk", "spot-hedge", "optimum"}
    assert len(result.results) == 2 * 7 * 4 * 3  # settings x policies x starts x homes
    assert result.misses == 0
    assert (summary.loc[summary["policy"] == "on-demand", "vs_on_demand"] == 1).all()
    best = summary.set_index(["deadline_hours", "policy"])["cost_usd"]
    for deadline in (2.5, 3):
        assert (best.loc[deadline] >= best.loc[(deadline, "optimum")] - 1e-9).all()
    closed = summary.set_index(["deadline_hours", "policy"])["gap_closed"]
    assert closed.loc[(2.5, "greedy")] == 0 and closed.loc[(2.5, "optimum")] == 1
    assert result.trace["zones"] == ZONES


def test_a_subset_of_zones_and_policies(availability_store) -> None:
    result = deadline_backtest(availability_store, zones=["us-east-1b"], job_hours=1,
                               deadline_hours=(2,), restart_minutes=(3,),
                               policies=["greedy"], starts=2)
    assert set(result.summary["policy"]) == {"on-demand", "greedy", "optimum"}
    assert set(result.results["home"]) == {"us-east-1b"}


def test_bad_values_name_them(availability_store) -> None:
    with pytest.raises(InvalidInput, match="deadline_hours 1: expected at least"):
        deadline_backtest(availability_store, job_hours=2, deadline_hours=(1,))
    with pytest.raises(InvalidInput, match="longer than the availability trace"):
        deadline_backtest(availability_store, job_hours=2, deadline_hours=(100,))
    with pytest.raises(InvalidInput, match="p3.2xlarge in us-east-1z: stored zones: "
                       "us-east-1a.*did you mean 'us-east-1b'"):
        deadline_backtest(availability_store, zones=["us-east-1z"])


def test_an_empty_store_says_what_to_do(store) -> None:
    with pytest.raises(InvalidInput, match="the store has no availability trace: import one first"):
        deadline_backtest(store)


def command():
    app = typer.Typer()
    app.command("backtest-deadline")(deadline_backtest_cmd)
    app.command("unused")(lambda: None)  # keeps the command's name on the line
    return app


def test_the_command_prints_the_table_and_json(availability_store, db_path, tmp_path) -> None:
    runner = CliRunner()
    args = ["backtest-deadline", "--deadline", "2.5", "--job-hours", "2",
            "--restart-minutes", "3,12", "--checkpoint-minutes", "10", "--starts", "3",
            "--db", str(db_path)]
    out = runner.invoke(command(), [*args, "--plot", str(tmp_path / "d.png")])
    assert out.exit_code == 0, out.output
    assert "spot-anywhere" in out.output and "misses" in out.output
    assert (tmp_path / "d.png").stat().st_size > 0
    data = json.loads(runner.invoke(command(), [*args, "--json"]).output)
    assert {row["policy"] for row in data["summary"]} >= {"greedy", "optimum"}
    assert all(row["met"] for row in data["runs"])


def test_the_command_rejects_bad_numbers_in_one_line(availability_store, db_path) -> None:
    out = CliRunner().invoke(command(), ["backtest-deadline", "--deadline", "soon",
                                         "--db", str(db_path)])
    assert out.exit_code == 2
    assert "--deadline 'soon': expected hours (48, '36h', '2d', '90m')" in out.output
    assert "Traceback" not in out.output


def test_the_home_zone_optimum_is_the_single_zone_reference(availability_store) -> None:
    result = deadline_backtest(availability_store, job_hours=2, deadline_hours=(3,),
                               restart_minutes=(3,), checkpoint_minutes=10, starts=3,
                               policies=["greedy", "uniform-progress"], home_optimum=True)
    runs = result.results.set_index(["policy", "start_tick", "home"])["cost_usd"]
    home, best = runs.loc["optimum (home zone)"], runs.loc["optimum"]
    greedy = runs.loc["greedy"]
    # Staying home can only cost more than the best over all zones, and no home-zone
    # policy beats it.
    assert (home >= best - 1e-9).all() and (home > best + 1e-9).any()
    assert (greedy >= home - 1e-9).all()
    closed = result.summary.set_index("policy")["gap_closed_home"]
    assert closed["greedy"] == 0 and closed["optimum (home zone)"] == 1


def test_the_command_can_choose_the_checkpoint_interval(availability_store, db_path) -> None:
    args = ["backtest-deadline", "--deadline", "2.5", "--job-hours", "2",
            "--restart-minutes", "3", "--starts", "2", "--db", str(db_path)]
    out = CliRunner().invoke(command(), [*args, "--checkpoint-minutes", "auto"])
    assert out.exit_code == 0, out.output
    assert "checkpoints: auto:" in out.output and "preemptions/h" in out.output
    bad = CliRunner().invoke(command(), [*args, "--checkpoint-minutes", "soon"])
    assert bad.exit_code == 2
    assert "checkpoint-minutes 'soon': expected minutes > 0 or 'auto'" in bad.output
    assert "Traceback" not in bad.output
