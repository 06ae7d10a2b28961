"""A job that exited 0 short of its declared steps is stored `succeeded` (the job contract),
but every view shows it `ended-short` (`work.ended_short`, one rule): `status`, its --json,
`status --state ended-short` (and `--state succeeded` no longer lists it) and the
dashboard. A job that reported step 0 and failed reads 0%, a step reported, in `status`
as on the dashboard's page. In-memory launcher, SQLite store."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from costsched.cli.status_lines import print_status
from costsched.model import SHOWN_STATES
from costsched.service import jobs as service
from costsched.service.job_filters import parse_states
from costsched.service.views import status_document
from costsched.store import PriceStore
from costsched.vocabulary import stored_states
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_short_exit import STEPS, ended


def test_ended_short_is_a_shown_state_of_a_stored_success() -> None:
    assert "ended-short" in SHOWN_STATES  # was: not a state
    assert SHOWN_STATES.index("ended-short") == SHOWN_STATES.index("succeeded") + 1
    assert stored_states(["ended-short"]) == ["succeeded"]
    assert parse_states(["ended_short"]) == ["ended-short"]


def test_a_job_that_ended_short_reads_ended_short_and_is_filtered_so(
        store: PriceStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    launcher, short = ended(store, tmp_path, 0)
    _, done = ended(store, tmp_path, STEPS)
    assert store.jobs.get(short).state == "succeeded"  # stored as the contract says
    [s] = service.status(store, launcher, short, reconcile_first=False)
    [doc] = status_document([s])
    assert doc["state"] == "ended-short"  # was: succeeded
    print_status([s], json_out=False)
    out = capsys.readouterr().out
    assert "ended-short" in out, out
    listed = service.status(store, launcher, states=["ended-short"], reconcile_first=False)
    assert [x.record.id for x in listed] == [short]
    listed = service.status(store, launcher, states=["succeeded"], reconcile_first=False)
    assert [x.record.id for x in listed] == [done]  # was: both
    [doc] = status_document(service.status(store, launcher, done, reconcile_first=False))
    assert doc["state"] == "succeeded"


def failed_at_0(store: PriceStore, tmp_path: Path) -> tuple[FakeLauncher, int]:
    """A job that wrote step 0 and exited 1, closed by a pass."""
    from datetime import datetime, timezone

    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "f.yaml"
    path.write_text(yaml.safe_dump({
        "name": "f", "throughputs": {"V100": 0.5}, "steps": STEPS, "run": "false",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    start = store.jobs.placements(job.id)["start_at"].iloc[0].to_pydatetime()
    [instance] = launcher.states
    launcher.states[instance] = replace(launcher.states[instance], state="failed",
                                        exit_code=1, step=0)
    service.reconcile(store, launcher, at=start + timedelta(minutes=1))
    assert store.jobs.get(job.id).state == "failed"
    return launcher, job.id


def test_a_failed_job_that_reported_step_0_reads_0_percent(
        store: PriceStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    launcher, job = failed_at_0(store, tmp_path)
    [s] = service.status(store, launcher, job, reconcile_first=False)
    assert (s.progress, s.progress_source) == (0.0, "reported")  # was: (None, None)
    print_status([s], json_out=False)
    out = " ".join(capsys.readouterr().out.split())
    assert " 0% " in out, out  # was: '-'
