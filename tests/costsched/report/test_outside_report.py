"""`report` puts a job's billed hours beyond its training down to what costsched knows, in
the same words in its text, its --json and its HTML file: a job that trained its plan's
hours but was billed 14% more, most of it the 3,600 steps its preemption lost and it
trained again, reads so, never 'its setup'."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner

from costsched.model import RECOVERY_NOTE
from costsched.store import PriceStore
from tests.costsched.report.report_stores import _observe
from tests.costsched.report.test_estimates import EAST, at, planned_job

SAID = ("hours within, cost over (12% of its billed hours outside training: 3,600 steps "
        "lost at a preemption and trained again, 9%; its setup, 1%; before its first step "
        "and after its last, 2%)")


def preempted(store: PriceStore) -> int:
    """36,000 steps planned at 1 step/s (10 h, $10, on the local launcher, no start):
    3 h of training on its first instance, preempted 3,600 steps past its checkpoint at
    step 7,200, then 8 h on its second; 180 s of setup measured on each; 11.4 h billed."""
    _observe(store, EAST, "V100", at(-1), 1.0)
    job = planned_job(store, "kws")
    second = (*EAST[:2], "us-east-1b", *EAST[3:])
    _observe(store, second, "V100", at(-1), 1.0)

    def read(step: float, hours: float) -> None:
        store.jobs.record_steps({job: step}, at=at(hours), setups={job: 180.0})

    read(0, 0.15)
    read(10_800, 3.15)
    store.jobs.end_placement(job, at(3.2))
    store.jobs.note(job, RECOVERY_NOTE, "instance kws-1: resumes from step 7,200 (its "
                    "checkpoint's): 3,600 steps lost", at=at(3.2))
    store.moves.create(job, "recovery", [], at=at(3.2), source_instance="kws-1",
                       detail="instance kws-1 preempted")
    store.jobs.place(job, second, gpu_model="V100", gpu_count=1, at=at(3.2),
                     usd_per_hour=1.0, reason="recovery", instance="kws-2")
    read(7_200, 3.35)
    read(36_000, 11.35)
    store.jobs.end_placement(job, at(11.4))
    store.jobs.transition(job, "succeeded", at=at(11.4))
    assert store.jobs.setups([job]) == {job: [180.0, 180.0]}
    return job


def test_the_text_json_and_html_put_the_gap_down_to_the_preemption(tmp_path: Path) -> None:
    from costsched.cli import app, common

    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store = PriceStore(url)
    preempted(store)
    store.engine.dispose()
    common.console.width = common.err_console.width = 400  # a row on one line
    until = ["--db", url, "--until", (at(12) + timedelta(minutes=1)).isoformat()]
    doc = json.loads(CliRunner().invoke(app, ["report", *until, "--json"]).stdout)
    [row] = doc["estimates"]
    assert (row["training_hours"], row["usd"], row["preemptions"]) == (10.0, 11.4, 1), row
    assert row["vs_estimate"] == SAID
    text = CliRunner().invoke(app, ["report", *until]).stdout
    assert SAID in " ".join(text.split()), text
    page = tmp_path / "report.html"
    assert CliRunner().invoke(app, ["report", *until, "--html", str(page)]).exit_code == 0
    assert SAID in " ".join(page.read_text().split())
    assert "its setup, and before" not in text + page.read_text()
