"""A dashboard over a store: the report's hand-worked scenario, and jobs that ended (whose
costs do not change with the clock, so the API and the CLI can be compared exactly)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the dashboard extra is not installed")

from starlette.testclient import TestClient  # noqa: E402

from costsched.dashboard.app import create_app  # noqa: E402
from costsched.dashboard.auth import Access  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from tests.costsched.report.scenario import EAST, WEST, at, fill, observe  # noqa: E402

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example key


@pytest.fixture()
def instances(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The local launcher's instances, in the test's own folder."""
    folder = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(folder))
    return folder


def ended(store: PriceStore, instances: Path) -> dict[str, int]:
    """Two jobs of the local launcher that ran and ended: 'done' moved once (east to
    west) and succeeded, 'stopped' was stopped; 'done' printed a secret in its output."""
    observe(store, EAST, [(-10, 1.0)])
    observe(store, WEST, [(-10, 0.5)])
    ids = {}
    for name, state in (("done", "succeeded"), ("stopped", "stopped")):
        spec = {"spec": {"name": name, "throughputs": {"V100": 2.0}, "steps": 100,
                         "constraints": {"budget": 3.0}}, "launcher": "local"}
        job = store.jobs.create(name, spec, 100, at=at(0))
        store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                         reason="launch", instance=f"{job}-1")
        store.jobs.transition(job, "running", at=at(0))
        if name == "done":
            store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=at(1),
                             usd_per_hour=0.5, reason="migration", instance=f"{job}-2")
        store.jobs.end_placement(job, at(2))
        store.jobs.transition(job, state, at=at(2))
        folder = instances / f"{job}-{2 if name == 'done' else 1}"
        folder.mkdir(parents=True)
        (folder / "instance.json").write_text(json.dumps({"job_id": job}))
        (folder / "job.log").write_text(f"step 100\nAWS_SECRET_ACCESS_KEY={SECRET}\nbye\n")
        ids[name] = job
    return ids


def running(store: PriceStore, name: str, budget: float | None = None) -> int:
    """A job running on EAST since hour 0 (no instance: the launcher does not know it)."""
    spec = {"spec": {"name": name, "throughputs": {"V100": 2.0}, "steps": 1e6,
                     "constraints": {"budget": budget}}}
    job = store.jobs.create(name, spec, 1e6, at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1", keep_open=True)
    store.jobs.transition(job, "running", at=at(0))
    return job


@pytest.fixture()
def client(store: PriceStore) -> TestClient:
    return TestClient(create_app(store))


def app_client(store: PriceStore, access: Access, base_url: str = "http://127.0.0.1:8765"
               ) -> TestClient:
    return TestClient(create_app(store, access), base_url=base_url)


__all__ = ["SECRET", "app_client", "ended", "fill", "running"]
