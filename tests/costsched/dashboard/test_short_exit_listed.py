"""The dashboard's list of jobs says what `status` says of a job that exited 0 short of its
declared steps (`work.short_words`), beside its progress, not only its deadline met."""

from __future__ import annotations

from datetime import timedelta

from starlette.testclient import TestClient

from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, at, observe

SAID = ("exited 0 at step 5 of 2,400 (the last step it reported): its declared steps were "
        "not reached")


def ended_job(store: PriceStore, name: str, end: str, checkpoints: str = "") -> int:
    """A job of 2,400 declared steps that reported step 5 and ended (`end`) 3 min in."""
    spec = {"spec": {"name": name, "throughputs": {"V100": 2.0}, "steps": 2400,
                     "constraints": {"deadline": "2030-01-01T00:00:00Z"}},
            "launcher": "local"}
    job = store.jobs.create(name, spec, 2400, at=at(0), checkpoint_location=checkpoints)
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1")
    store.jobs.transition(job, "running", at=at(0))
    store.jobs.record_step(job, 1, at=at(0) + timedelta(minutes=1))
    store.jobs.record_step(job, 5, at=at(0) + timedelta(minutes=2))
    store.jobs.end_placement(job, at(0) + timedelta(minutes=3))
    store.jobs.transition(job, end, at=at(0) + timedelta(minutes=3))
    return job


def test_the_jobs_list_says_a_job_ended_short_of_its_steps(store: PriceStore,
                                                           client: TestClient) -> None:
    observe(store, EAST, [(-10, 1.0)])
    ended_job(store, "short", "succeeded")
    [listed] = client.get("/api/jobs").json()["jobs"]
    assert listed["steps_not_reached"] == SAID  # what status says
    page = " ".join(client.get("/").text.split())
    assert SAID in page


def test_the_dashboard_shows_and_filters_a_job_that_ended_short(store: PriceStore,
                                                                client: TestClient) -> None:
    test_the_jobs_list_says_a_job_ended_short_of_its_steps(store, client)
    [listed] = client.get("/api/jobs?state=ended-short").json()["jobs"]
    assert listed["state"] == "ended-short"  # was: succeeded
    assert client.get("/api/jobs?state=succeeded").json()["jobs"] == []
    page = " ".join(client.get(f"/jobs/{listed['id']}").text.split())
    assert 'state-ended-short">ended-short<' in page
    assert 'value="ended-short"' in client.get("/").text  # the filter offers it


def test_a_failed_job_that_reported_step_0_reads_0_percent_on_its_page(
        store: PriceStore, client: TestClient) -> None:
    observe(store, EAST, [(-10, 1.0)])
    spec = {"spec": {"name": "f", "throughputs": {"V100": 2.0}, "steps": 1500},
            "launcher": "local"}
    job = store.jobs.create("f", spec, 1500, at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1")
    store.jobs.transition(job, "running", at=at(0))
    store.jobs.record_steps({job: 0.0}, at=at(0) + timedelta(minutes=1), extend=False)
    store.jobs.end_placement(job, at(0) + timedelta(minutes=2))
    store.jobs.transition(job, "failed", at=at(0) + timedelta(minutes=2))
    page = " ".join(client.get(f"/jobs/{job}").text.split())
    assert "no step reported" not in page, page  # was: beside 'steps 0 of 1,500'
    assert ">0%<" in page and "steps</dt><dd>0 of 1,500" in page, page
