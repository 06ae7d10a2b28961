"""A launch checks a job's own budget by the watch's rule (local launcher, real
subprocesses, a real SQLite store): its expected cost plus the first watch interval's
charge, which the watcher charges ahead of every job it lets run. A budget that the
expected cost fits but that charge passes is refused at launch (rc 2) with the amount
that is enough; launched with that amount, the first watch lets it run."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.service.jobs import caps
from costsched.service.jobs.caps import raise_budget
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.cleanup import stop_unless_ended
from tests.costsched.service.test_budget_caps import _project

USD_PER_HOUR = 3.6  # a tenth of a cent a second: 30 s of watch interval is $0.03


@pytest.fixture
def priced(tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch):
    import pandas as pd

    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=USD_PER_HOUR, effective_at=pd.Timestamp("2026-01-01T00:00:00Z"),
        source="test")]))
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    config = tmp_path / "instant-start.toml"  # a local instance starts at once
    config.write_text("[migration]\nrestart_minutes = 0\nwarmup_minutes = 0\n"
                      "[daemon]\nwatch_seconds = 30\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    return store, LocalLauncher(tmp_path / "instances", poll_seconds=0.2)


def _budgeted(project: Path, budget: float) -> None:
    spec = yaml.safe_load((project / "job.yaml").read_text())
    spec["constraints"]["budget"] = budget
    (project / "job.yaml").write_text(yaml.safe_dump(spec))


def test_launch_refuses_a_budget_the_first_watch_interval_passes_and_names_enough(
        tmp_path: Path, priced, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher = priced
    # 2,000 steps at 100 steps/s (as it runs: 0.01 s a step): 20 s, $0.02 expected; the
    # watch charges its rest ahead, 21 s (shorter than the 30 s interval), $0.021: $0.041
    # in all, more than a budget of $0.03.
    project = _project(tmp_path, "tight", {"budget": 0.03}, steps=2000, speed=100)
    monkeypatch.chdir(project)
    refused = cli("launch", "job.yaml", "--launcher", "local", "--wait", "0")
    assert refused.exit_code == 2, refused.output
    said = " ".join(refused.output.split())
    assert "expected $0.02" in said and "does not fit" in said, said
    assert ("+ $0.0210 for the first watch interval (21 s, to its end at its pace, at "
            "$3.6000/h)") in said, said
    assert store.jobs.list().empty
    found = re.search(r"raise constraints\.budget in job\.yaml to ([0-9.]+)", said)
    assert found, said
    enough = float(found.group(1))
    assert 0.041 <= enough <= 0.05

    _budgeted(project, enough)  # the amount it names is enough: launched, not stopped
    launched = cli("launch", "job.yaml", "--launcher", "local", "--wait", "0")
    assert launched.exit_code == 0, launched.output
    [job_id] = (int(j) for j in store.jobs.list()["id"])
    try:
        assert "fits" in launched.output
        events = caps.enforce(store, launcher, BudgetsConfig(),
                              datetime.now(timezone.utc), 30.0)
        assert [e for e in events if "stopped" in e] == []
        assert store.jobs.get(job_id).state == "running"
    finally:
        stop_unless_ended(store, launcher, job_id)


def test_a_stop_at_its_own_budget_says_the_span_it_charges(tmp_path: Path, priced,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    from costsched.service import jobs as service

    store, launcher = priced
    # Its rest (2,000 s at its 100 steps/s) longer than the interval: the interval charged.
    project = _project(tmp_path, "spanned", {"budget": 2.1}, steps=200_000, speed=100)
    monkeypatch.chdir(project)
    [job] = service.launch(store, ["job.yaml"], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    try:
        raise_budget(store, job.id, 0.06, at=datetime.now(timezone.utc))
        [event] = [e for e in caps.enforce(store, launcher, BudgetsConfig(),
                                           datetime.now(timezone.utc), 600.0)
                   if "stopped" in e]
        assert "for the next watch interval (600 s at $3.6000/h)" in event, event
    finally:
        stop_unless_ended(store, launcher, job.id)


def test_a_launch_whose_job_its_own_cap_stopped_says_the_budget_as_status_does(
        tmp_path: Path, priced, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.service.jobs import budget_launch

    store, _ = priced
    # Its plan ($0.02: 20 s at $3.60/h) within its budget, but not its spend and its rest
    # (in whole seconds, and one more) at the watch of its wait: the watch stops it.
    project = _project(tmp_path, "watched", {"budget": 0.0205}, steps=2000, speed=100)
    monkeypatch.chdir(project)
    # A launch that checked nothing: the watch of its wait stops the job at its cap.
    monkeypatch.setattr(budget_launch, "launch_fits", lambda *args, **kwargs: [])
    launched = cli("launch", "job.yaml", "--launcher", "local", "--wait", "1")
    assert launched.exit_code == 0, launched.output
    said = " ".join(launched.output.split())
    assert store.jobs.list()["state"].tolist() == ["stopped"]
    assert "no longer configured" not in said, said  # its own budget is configured
    assert "stopped at its own budget: " in said, said  # the stop's own reason
    assert "would pass the budget of $0.0205" in said, said
