"""`plan` says where `launch` places a job that its deadline policy places (a deadline, and
on-demand allowed) when that is not the table's first row: the offering, what it costs
there if spot lasts, multiplied out, and the `--offering` that takes #1 instead. Both are
checked against real launches on the local launcher (a real SQLite store, the bundled
list prices)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from decimal import Decimal
from pathlib import Path

import pytest

# ResNet-50's 200,190 steps within 20 h, anywhere: the deadline policy weighs the spot
# offerings otherwise than the table, each alone, does.
JOB = """\
name: {name}
run: {python} -c 'import time; time.sleep(120)'
model: ResNet-50 (batch size 64)
steps: 200190
constraints: {{deadline: 20h{markets}}}
"""


def job(tmp_path: Path, name: str, markets: str = "") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(JOB.format(name=name, python=sys.executable, markets=markets))
    return path


@pytest.fixture
def no_supervisor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")


def placed_at(cli, name: str) -> str:
    """The offering a launched job runs on, as `status --json` names it."""
    out = cli("status", name, "--json")
    assert out.exit_code == 0, out.output
    p = json.loads(out.output)["jobs"][0]["placement"]
    return f"{p['cloud']} {p['zone'] or p['region']} {p['instance_type']} " \
           f"{p['market'].replace('_', '-')}"


def test_plan_says_where_launch_places_a_deadline_job(cli, tmp_path, no_supervisor,
                                                       monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # the file named as typed: relative
    job(tmp_path, "anywhere")
    planned = cli("plan", "anywhere.yaml", "--json")
    assert planned.exit_code == 0, planned.output
    doc = json.loads(planned.output)
    placed = doc["jobs"][0]["launch_placement"]
    first = doc["rankings"][0]["ranking"][0]["offering"]
    assert placed["policy"] == "spot-hedge"
    assert placed["offering"] != first  # the case the line is for
    text = " ".join(cli("plan", "anywhere.yaml").output.split())
    line = re.search(r"launch places it by its deadline policy spot-hedge, not by this "
                     r"table's order: on (.+?) \((.+?)\), (\S+) h x \$(\S+)/h = \$(\S+) for "
                     r"its work if spot lasts, on-demand of its type when the "
                     r"deadline needs it; "
                     r"`costsched (launch anywhere\.yaml --offering '(.+?)')` takes #1 instead",
                     text)
    assert line, text  # (its work alone: the local launcher boots no instance to start)
    assert line[1] == placed["offering"] and line[7] == first
    # multiplied out at the decimals shown
    product = Decimal(line[3]) * Decimal(line[4])
    places = -Decimal(line[5]).as_tuple().exponent
    assert product.quantize(Decimal(1).scaleb(-places)) == Decimal(line[5])
    try:
        # the hint, run as printed, takes #1
        taken = cli(*shlex.split(line[6]))
        assert taken.exit_code == 0, taken.output
        assert placed_at(cli, "anywhere") == first
        cli("stop", "anywhere")
        # and what the plan said is what launch does
        job(tmp_path, "policy")
        launched = cli("launch", "policy.yaml", "--wait", "0")
        assert launched.exit_code == 0, launched.output
        assert placed_at(cli, "policy") == placed["offering"]
    finally:
        cli("stop", "anywhere")
        cli("stop", "policy")


def test_a_file_of_several_jobs_names_the_job_the_hint_is_for(cli, tmp_path, no_supervisor,
                                                               monkeypatch) -> None:
    """`--offering` places every job of the file there: the line says which job it is
    said of, and that the file's other jobs go there too; run as printed, it does."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "two jobs.yaml").write_text("---\n".join(  # each its own table: own steps
        JOB.format(name=n, python=sys.executable, markets="").replace("200190", steps)
        for n, steps in (("one", "200190"), ("two", "200000"))))
    text = " ".join(cli("plan", "two jobs.yaml").output.split())
    said = re.findall(r"`costsched (launch 'two jobs\.yaml' --offering '(.+?)')` takes #1 "
                      r"for job (\w+) instead \(it places each job of two jobs\.yaml there\)",
                      text)
    assert [name for _, _, name in said] == ["one", "two"], text
    command, first, _ = said[0]
    try:
        taken = cli(*shlex.split(command))
        assert taken.exit_code == 0, taken.output
        assert placed_at(cli, "one") == placed_at(cli, "two") == first
    finally:
        cli("stop", "one")
        cli("stop", "two")


def test_a_job_the_table_places_gets_no_line(cli, tmp_path) -> None:
    """Spot only: no on-demand to fall back on, so the cost policy takes the table's
    order, and plan says nothing more."""
    path = job(tmp_path, "spotonly", ", markets: [spot]")
    planned = cli("plan", path, "--json")
    assert planned.exit_code == 0, planned.output
    assert json.loads(planned.output)["jobs"][0]["launch_placement"] is None
    assert "launch places it" not in cli("plan", path).output


def test_explain_and_emit_do_not_ask(cli, tmp_path) -> None:
    path = job(tmp_path, "anywhere")
    for extra in (["--explain", "1"], ["--emit", "sky"]):
        out = cli("plan", path, *extra)
        assert out.exit_code == 0, out.output
        assert "launch places it" not in out.output


def test_launch_prices_its_start_as_configured_as_the_plan_does(
        cli, tmp_path, monkeypatch) -> None:
    """With no warm-up configured and no boot in the file, the placement launch makes is
    priced with the start the plan's rows count (none), not the defaults' 15 minutes."""
    monkeypatch.setenv("COSTSCHED_MIGRATION_WARMUP_MINUTES", "0")
    path = tmp_path / "quick.yaml"
    path.write_text(f"name: quick\nrun: {sys.executable} -c 'print(1)'\nsteps: 600\n"
                    "throughputs: {T4: 30}\ncheckpoint: {restart_minutes: 0}\n"
                    "constraints: {deadline: 6m, markets: [spot, on-demand], "
                    "gpu_models: [T4]}\n")
    doc = json.loads(cli("plan", path, "--json").output)
    placed = doc["jobs"][0]["launch_placement"]
    [row] = [r for r in doc["rankings"][0]["ranking"] if r["offering"] == placed["offering"]]
    assert row["start_hours"] == 0
    assert placed["expected_usd"] == pytest.approx(row["work_hours"] * row["usd_per_hour"],
                                                   rel=1e-6)


def test_an_on_demand_placement_is_said_as_one() -> None:
    import pandas as pd

    from costsched.cli.plan_placed import placed_note
    from costsched.service.launch_place import LaunchPlacement

    shown = pd.DataFrame({"offering": ["aws us-west-2 g4dn.xlarge spot",
                                       "aws us-west-2 g4dn.xlarge on-demand"]})
    placed = LaunchPlacement("spot-hedge", ("aws", "us-west-2", "", "g4dn.xlarge",
                                            "on_demand", "linux"),
                             "aws us-west-2 g4dn.xlarge on-demand", 0.526, 0.00292444)
    line = placed_note(placed, shown.assign(excluded=""), shown, "job.yaml")
    assert line == ("launch places it by its deadline policy spot-hedge, not by this "
                    "table's order: on aws us-west-2 g4dn.xlarge on-demand (#2 here), "
                    "0.0056 h x $0.5260/h = $0.0029 for its work and start; `costsched "
                    "launch job.yaml --offering 'aws us-west-2 g4dn.xlarge spot'` takes #1 "
                    "instead")


SKY_ON_DEMAND = """\
name: od
num_nodes: 2
resources:
  ordered:
    - accelerators: V100:1
    - accelerators: T4:1
  use_spot: false
run: 'true'
costsched: {throughputs: {T4: 20, V100: 20}, steps: 500, deadline: 2h}
"""


@pytest.mark.parametrize(("text", "key"), [
    (SKY_ON_DEMAND, "resources.use_spot: false in od.yaml"),
    # a task that writes none is not quoted as writing it
    (SKY_ON_DEMAND.replace("  use_spot: false\n", ""),
     "resources.use_spot (not written in od.yaml: false, as in SkyPilot)"),
    (JOB.format(name="od", python=sys.executable, markets=", markets: [on_demand]"),
     "constraints.markets: [on_demand] in od.yaml")])
def test_a_job_kept_off_spot_is_on_demand_as_its_file_asks(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,  # noqa: ANN001
        key: str) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.chdir(tmp_path)  # the file named as typed
    (tmp_path / "od.yaml").write_text(text)
    shown = cli("plan", "od.yaml")
    assert shown.exit_code == 0, shown.output
    out = " ".join(shown.stdout.split())
    assert f"launch places it on #1: on-demand, as {key} asks" in out, out
    assert "deadline needs it now" not in out and "spot-hedge" not in out, out
    [planned] = json.loads(cli("plan", "od.yaml", "--json").stdout)["jobs"]
    reason = planned["launch_placement"]["reason"]
    assert f"on-demand, as {key} asks" in reason and "no spot offering" not in reason, reason
