"""A gang's node replaced where it ran is a recovery without a move: the report's
"Migrations, recoveries and starts" lists it (its text, --json, the HTML file, the
dashboard's job and Spend pages), so the rows add up to the recoveries `status` and the
jobs list count. A real 2-node job on the local launcher, its node 1 preempted."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from costsched.cli import app
from costsched.model import NODE_RECOVERY
from costsched.report import build
from costsched.report.html import render
from costsched.service import jobs as service
from launchers.checkpoints import open_store
from tests.costsched.service.test_gang import (  # noqa: F401 - `world`: the fixture
    finish,
    free_port,
    preempted_gang,
    task,
    wait_for,
    world,
)
from tests.real_jobs import SETTLE

NODE_ROW = "node recovery"
STOPPED = "stopped before the gang resumed"


def test_a_node_replaced_in_place_is_a_row_of_the_moves_and_adds_up(
        world, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    store, launcher, tmp = world
    job_id, first, _, counter = preempted_gang(store, launcher, tmp)
    finish(store, launcher, job_id)
    counter.stopped = True
    assert store.jobs.get(job_id).state == "succeeded", store.jobs.events(job_id)
    [shown] = service.status(store, launcher, job_id, reconcile_first=False)
    assert shown.recoveries == 1

    report = build(store, job=job_id)
    rows = report.rows["moves"]
    [node] = [r for r in rows if r["kind"] == NODE_ROW]
    # the rows and the count are one fact
    assert sum(r["kind"] in ("recovery", NODE_ROW) for r in rows) == shown.recoveries
    [event] = [e for e in store.jobs.event_rows([job_id], [NODE_RECOVERY])]
    assert node["at"] == event.at and node["state"] == "done" and node["move_id"] is None
    assert node["source"] == "node 1"
    assert node["target"] == "aws us-east-1a p3.2xlarge spot"  # where it was replaced
    # Its idle time: both nodes billed from the loss seen to the gang's resuming, at the
    # stored price (the placement's, $1.25/h a node).
    resumed = [e.at for e in store.jobs.event_rows([job_id], ["gang", NODE_RECOVERY])
               if "resumes from its newest checkpoint" in str(e.detail)][0]
    paused_hours = (resumed - event.at).total_seconds() / 3600
    assert node["idle_usd"] == pytest.approx(2 * 1.25 * paused_hours)
    assert node["egress_usd"] == 0.0 and node["usd"] == node["idle_usd"]

    db = ["--db", str(tmp / "store.sqlite")]
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(launcher.base_dir))
    got = CliRunner().invoke(app, ["report", "--job", str(job_id), "--json", *db])
    assert got.exit_code == 0, got.output
    [kinds] = [[m["kind"] for m in json.loads(got.output)["moves"]]]
    assert kinds.count(NODE_ROW) == 1
    got = CliRunner().invoke(app, ["report", "--job", str(job_id), *db],
                             env={"COLUMNS": "250"})
    assert got.exit_code == 0 and NODE_ROW in got.output and "node 1" in got.output
    assert f"<td>{NODE_ROW}</td>" in render(report)

    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    client = TestClient(create_app(store))
    page = client.get(f"/jobs/{job_id}").text
    moves = page[page.index("<h2>Migrations, recoveries and starts</h2>"):]
    moves = moves[:moves.index("</table>")] if "</table>" in moves else moves[:200]
    assert f"<td>{NODE_ROW}</td>" in moves and "node 1" in moves
    assert NODE_ROW in client.get("/spend").text


def test_a_gang_stopped_while_its_node_was_replaced_is_no_recovery_in_the_report(
        world, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    store, launcher, tmp = world
    slow = tmp / "slow"  # the replacement's setup outlasts the pass that starts it
    path = task(tmp, free_port(), 0.02)
    doc = yaml.safe_load(path.read_text())
    doc["setup"] = f"if [ -e {slow} ]; then sleep 60; fi"
    path.write_text(yaml.safe_dump(doc))
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=SETTLE,
                           checkpoint_root=str(tmp / "checkpoints"))
    wait_for(open_store(store.jobs.get(job.id).checkpoint_location).newest_verified)
    slow.touch()
    launcher.preempt_node(str(store.jobs.placements(job.id)["instance"].iloc[-1]), 1)
    service.reconcile(store, launcher)  # node 1 replaced: its setup runs
    service.stop(store, launcher, job.id)
    [shown] = service.status(store, launcher, job.id, reconcile_first=False)
    assert shown.recoveries == 0 and shown.stopped_first

    report = build(store, job=job.id)
    [node] = [r for r in report.rows["moves"] if r["kind"] == NODE_ROW]
    assert node["state"] == STOPPED and node["source"] == "node 1"
    counted = [r for r in report.rows["moves"]
               if r["kind"] in ("recovery", NODE_ROW) and r["state"] != STOPPED]
    assert len(counted) == shown.recoveries
    [estimate] = report.rows["estimates"]
    assert estimate["preemptions"] == 0

    db = ["--db", str(tmp / "store.sqlite")]
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(launcher.base_dir))
    got = CliRunner().invoke(app, ["report", "--job", str(job.id), "--json", *db])
    assert got.exit_code == 0, got.output
    shown_json = json.loads(got.output)
    assert [m["state"] for m in shown_json["moves"] if m["kind"] == NODE_ROW] == [STOPPED]
    assert shown_json["estimates"][0]["preemptions"] == 0
    got = CliRunner().invoke(app, ["report", "--job", str(job.id), *db],
                             env={"COLUMNS": "250"})
    assert got.exit_code == 0 and STOPPED in " ".join(got.output.split()), got.output
    assert f"<td>{STOPPED}</td>" in render(report)

    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    page = TestClient(create_app(store)).get(f"/jobs/{job.id}").text
    moves = page[page.index("<h2>Migrations, recoveries and starts</h2>"):]
    assert f"<td>{STOPPED}</td>" in moves[:moves.index("</table>")]
