"""A job's output on the dashboard masks its --secret values as `costsched logs` does
(their values from the process's environment, as the CLI takes them), and is withheld,
saying why and what shows it, where the dashboard's environment does not hold them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from costsched.dashboard.data import masked
from costsched.redact import MASK
from costsched.service.glance import MASKED_AT_SOURCE
from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, at, observe

NAME = "HF_TOKEN"


def printed(store: PriceStore, instances: Path, value: str) -> int:
    """An ended job given --secret HF_TOKEN that printed its value (in words no credential
    pattern catches: only the secret's own value can mask it)."""
    observe(store, EAST, [(-10, 1.0)])
    spec = {"spec": {"name": "tok", "throughputs": {"V100": 2.0}, "steps": 100,
                     "task": {"secrets": [NAME]}}, "launcher": "local"}
    job = store.jobs.create("tok", spec, 100, at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1")
    store.jobs.transition(job, "running", at=at(0))
    store.jobs.end_placement(job, at(1))
    store.jobs.transition(job, "succeeded", at=at(1))
    folder = instances / f"{job}-1"
    folder.mkdir(parents=True)
    (folder / "instance.json").write_text(json.dumps({"job_id": job}))
    (folder / "job.log").write_text(f"step 100\nlogged in to the hub as {value}\nbye\n")
    return job


def test_the_job_page_masks_a_secret_the_job_printed(store: PriceStore, client: TestClient,
                                                     instances: Path, cli,  # noqa: ANN001
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    value = "hf_kQ3vZp8mWx2LrT9aYc"
    monkeypatch.setenv(NAME, value)
    job = printed(store, instances, value)
    doc = client.get(f"/api/jobs/{job}").json()
    assert f"logged in to the hub as {MASK}" in doc["log_tail"] and "bye" in doc["log_tail"]
    page = client.get(f"/jobs/{job}").text
    assert value not in page and "logged in to the hub as" in page
    assert value not in cli("logs", str(job)).output  # as the CLI does, from the same source


def test_the_output_is_withheld_where_the_secret_cannot_be_known(
        store: PriceStore, client: TestClient, instances: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    value = "hf_Lm4nBv7cXz1QwE5rTy"
    monkeypatch.delenv(NAME, raising=False)
    job = printed(store, instances, value)
    doc = client.get(f"/api/jobs/{job}").json()
    assert value not in json.dumps(doc) and "step 100" not in doc["log_tail"]
    assert doc["log_tail"] == (
        f"(output withheld: job {job} was given --secret {NAME}, whose value this "
        "dashboard's environment does not hold, so it could not be masked if the job printed "
        f"it; start the dashboard with {NAME} set, or run `costsched logs {job}` where it is "
        "set)")
    page = client.get(f"/jobs/{job}").text
    assert value not in page and "output withheld" in page


def test_a_failures_last_lines_mask_or_withhold_the_same_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    value = "hf_Pq9sDf3gHj6kLz0xCv"
    stored = {"spec": {"task": {"secrets": [NAME]}}}
    job = {"id": 4, "name": "tok", "failure": {"exit_code": 1, "phase": None, "detail": "",
                                               "log_tail": ["ok", f"as {value}"]}}
    monkeypatch.delenv(NAME, raising=False)
    [line] = masked(job, stored)["failure"]["log_tail"]
    assert line.startswith("(output withheld: job 4 was given --secret HF_TOKEN")
    monkeypatch.setenv(NAME, value)
    assert masked(job, stored)["failure"]["log_tail"] == ["ok", f"as {MASK}"]
    assert masked(job)["failure"]["log_tail"] == ["ok", f"as {MASK}"]  # remembered now


def test_a_job_whose_agents_masked_its_log_is_shown_without_the_value(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A job stored since its agents write its log with its secrets masked: its output is
    shown (what the agent wrote, masked further by what this process knows), where a job
    stored before is withheld."""
    job = {"id": 5, "name": "tok", "failure": {"exit_code": 1, "phase": None, "detail": "",
                                               "log_tail": ["ok", "as ***"]}}
    monkeypatch.delenv(NAME, raising=False)
    stored = {"spec": {"task": {"secrets": [NAME]}}, MASKED_AT_SOURCE: True}
    assert masked(job, stored)["failure"]["log_tail"] == ["ok", "as ***"]
    [line] = masked(job, {**stored, MASKED_AT_SOURCE: None})["failure"]["log_tail"]
    assert line.startswith("(output withheld: job 5 was given --secret HF_TOKEN")
