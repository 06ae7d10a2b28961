"""A job stopped on one cloud and started again on another: the start's "from" reads where
its checkpoint was (the placement it stopped on), in the report's moves table (text, JSON,
HTML) and on the dashboard, beside the egress of the copy it carries."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from costsched.report import build
from costsched.store import PriceStore
from tests.costsched.report.scenario import GCP, WEST, at, job, observe, place

STOPPED_ON = "aws us-west-2b p3.2xlarge spot"
STARTED_ON = "gcp us-central1 a2-highgpu-1g spot"


def stopped_and_started(store: PriceStore) -> int:
    """Ran on WEST from 0 to 1 (stopped), started again at 2 on GCP (no source instance:
    nothing ran when it was started)."""
    observe(store, WEST, [(-10, 0.5)])
    observe(store, GCP, [(-10, 2.0)])
    job_id = job(store, "moved", {"V100": 1.0, "A100": 1.0}, gb=1)
    place(store, job_id, WEST, 0, "launch", "m-1")
    store.jobs.end_placement(job_id, at(1))
    move = store.moves.create(job_id, "start", [], at=at(2))
    place(store, job_id, GCP, 2, "start", "m-2", keep_open=True)
    for state in ("target_launched", "target_running", "done"):
        extra = {"target_instance": "m-2"} if state == "target_launched" else {}
        move = store.moves.advance(move, state, at=at(2.1), **extra)
    return job_id


def test_a_start_reads_from_where_its_checkpoint_was(store: PriceStore, db_path) -> None:
    stopped_and_started(store)
    report = build(store, now=at(3))
    [start] = report.moves.to_dict("records")
    assert start["kind"] == "start"
    assert start["source"] == STOPPED_ON and start["target"] == STARTED_ON
    assert start["egress_usd"] > 0  # the copy across clouds it carries
    [copy] = report.egress.to_dict("records")
    assert (copy["from_cloud"], copy["from_region"]) == ("aws", "us-west-2")

    from costsched.cli import app

    argv = ["report", "--db", str(db_path), "--until", at(3).isoformat()]
    moves = json.loads(CliRunner().invoke(app, [*argv, "--json"]).stdout)["moves"]
    assert [(m["source"], m["target"]) for m in moves] == [(STOPPED_ON, STARTED_ON)]
    text = CliRunner().invoke(app, argv, env={"COLUMNS": "250"}).stdout
    assert any(STOPPED_ON in line and STARTED_ON in line for line in text.splitlines())


def test_the_dashboard_reads_the_start_alike(store: PriceStore) -> None:
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    job_id = stopped_and_started(store)
    page = TestClient(create_app(store)).get(f"/jobs/{job_id}").text
    moves = page.split("<h2>Migrations, recoveries and starts</h2>")[1].split("</table>")[0]
    assert f"<td>{STOPPED_ON}</td><td>{STARTED_ON}</td>" in moves
