"""A job that trains past its declared steps (it declares 1,500 and reports 3,000): its step
is stored and shown as it reported it (status, --json `reported_step`, the dashboard's
document), its progress is 100% with no step left (never more, never negative), one line
says it reported more steps than the key of its file declares, and the report counts its
training after the declared last step as training (never as time before its first step
and after its last) and says the work was more than declared, never that it was slow.
A real local-launcher job, and the functions that decide."""

from __future__ import annotations

import math

import pytest

from costsched.cli.status_lines import print_status
from costsched.report.data import build
from costsched.report.estimates import verdict
from costsched.service import jobs as service
from costsched.service.jobs.halt import finishing
from costsched.service.jobs.runs import _progress_of, _running
from costsched.service.jobs.steps import _step_news
from costsched.service.speeds import short_work
from costsched.service.views import status_document
from costsched.work import past_words, share_done, steps_done, trained_seconds
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import STEPS, launch, wait_for

DONE = 2 * STEPS  # what the job really does: twice its declared steps
# Reports each step as it trains; at its last step it waits for `go` (a file) and exits 0.
JOB = PREAMBLE + """\
for step in range(1, int(sys.argv[2]) + 1):
    time.sleep(0.003)
    report(step)
while not Path(sys.argv[1]).exists():
    time.sleep(0.05)
print("Training completed. step", sys.argv[2], flush=True)
"""


def said_of(stored: dict) -> str:
    return past_words(DONE, STEPS, stored)


def test_the_words_name_the_key_that_declares_the_steps() -> None:
    native = {"spec": {"steps": STEPS}, "source": "train.yaml"}
    sky = {"spec": {"task": {"sky": True}}, "source": "bad/no_ckpt.yaml"}
    assert past_words(6000, 3000, sky) == (
        "reported 6,000 steps, more than the 3,000 declared (costsched.steps in "
        "bad/no_ckpt.yaml): the plan's hours and cost assumed 3,000")
    assert "(steps in train.yaml)" in past_words(DONE, STEPS, native)
    assert "(steps)" in past_words(DONE, STEPS, {"spec": {}, "source": "<stdin>"})


def test_the_steps_done_are_those_reported_and_the_share_at_most_all() -> None:
    assert steps_done(DONE, STEPS, succeeded=True, reported=True) == DONE  # was: STEPS
    assert steps_done(DONE, STEPS, succeeded=False, reported=True) == DONE
    assert steps_done(STEPS - 10, STEPS, succeeded=True, reported=True) == STEPS - 10  # short
    assert share_done(DONE, STEPS, succeeded=True, reported=True) == 1.0
    assert math.isnan(share_done(0, STEPS, succeeded=True, reported=False))
    # Readings of 100 steps in 10 s: the 3,000 steps it did took 300 s, not 150.
    readings = [(1, 1, 0.0, 0.0, 100.0, 10.0)]
    assert trained_seconds(readings, DONE, STEPS, True) == pytest.approx(300.0)


def test_the_judgement_says_the_work_was_more_than_declared() -> None:
    words = said_of({"spec": {}, "source": "train.yaml"})
    assert verdict(math.nan, math.nan, None, past=words) == words
    assert verdict(math.nan, math.nan, None, outside="5% of its billed hours outside "
                   "training: its setup", past=words) == (
        f"{words} (5% of its billed hours outside training: its setup)")


def test_a_step_past_the_declared_total_is_stored_as_reported(
        world, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    store, launcher, tmp = world
    go = tmp / "go"
    job, instance = launch(world, JOB, go, DONE)
    record = store.jobs.get(job.id)
    assert record.steps_total == STEPS
    assert _step_news(record, DONE) == DONE  # was: cut to STEPS

    def passed(step: float) -> bool:  # a pass (`status` reconciles and reads its step)
        service.status(store, launcher, job.id)
        return store.jobs.get(job.id).steps_done >= step

    wait_for(lambda: passed(STEPS // 2), poll=0.2)  # a reading before its declared end
    wait_for(lambda: launcher.status(instance).step == DONE)
    wait_for(lambda: passed(DONE), poll=0.2)  # read while it runs, past its declared steps
    running = store.jobs.get(job.id)
    assert running.state == "running" and running.steps_done == DONE
    # Its rest is none (never negative), and not priced: its declared work was short.
    assert _progress_of(_running(store, job.id), running.steps_done) == (0.0, True)
    assert short_work(running) == f"{said_of(running.spec)}; the rest cannot be priced"
    # Training past its declared steps, it is not 'finishing': its budget's cap binds.
    assert finishing(store, {job.id: _running(store, job.id)}, running.updated_at,
                     3600) == set()

    go.touch()
    wait_for(lambda: launcher.status(instance).state == "succeeded")
    service.reconcile(store, launcher)
    record = store.jobs.get(job.id)
    assert (record.state, record.steps_done) == ("succeeded", DONE)

    [shown] = service.status(store, launcher, job.id, reconcile_first=False)
    assert shown.reported_step == DONE and shown.step == DONE
    assert shown.progress == 1.0 and shown.steps_left == 0
    assert shown.steps_past == said_of(record.spec)
    assert "(steps in " in shown.steps_past and "train.yaml)" in shown.steps_past
    [doc] = status_document([shown])
    assert (doc["reported_step"], doc["step"], doc["progress"], doc["steps_left"]) == (
        DONE, DONE, 1.0, 0), doc
    assert doc["steps_past"] == shown.steps_past

    capsys.readouterr()
    print_status([shown], json_out=False)
    out = " ".join(capsys.readouterr().out.split())
    assert f"job {job.id}: {shown.steps_past}" in out, out
    assert out.count("more than the") == 1, out  # one line, once

    report = build(store)
    [row] = report.rows["estimates"]
    assert row["done"] == 1.0  # all of its declared work: never more than 100%
    assert row["vs_estimate"].startswith(shown.steps_past), row
    assert "slow" not in row["vs_estimate"] and "over" not in row["vs_estimate"], row
    assert math.isnan(row["training_hours_ratio"]) and math.isnan(row["usd_ratio"]), row
    # Its training hours count every step it reported at its measured pace: twice those
    # of its declared steps (was: its declared steps alone, the rest of its training
    # counted 'before its first step and after its last').
    readings = store.jobs.reading_rows([job.id])
    per_step = sum(float(r[5]) - float(r[3]) for r in readings) / sum(
        float(r[4]) - float(r[2]) for r in readings)
    assert row["training_hours"] > 1.5 * STEPS * per_step / 3600, (row, readings)
