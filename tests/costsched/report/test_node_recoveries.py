"""A gang's node replaced where it ran is a recovery without a move: the report's
"Migrations, recoveries and starts" lists it (its text, --json, the HTML file, the
dashboard's job and Spend pages), so the rows add up to the recoveries `status` and the
jobs list count. A real 2-node job on the local launcher, its node 1 preempted."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.model import NODE_RECOVERY
from costsched.report import build
from costsched.report.html import render
from costsched.service import jobs as service
from tests.costsched.service.test_gang import finish, preempted_gang, world  # noqa: F401

NODE_ROW = "node recovery"


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
