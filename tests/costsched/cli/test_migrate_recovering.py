"""`costsched migrate JOB` while another costsched recovers the job: never "No running job
to consider" with exit 0 (a script reads 0 as moved), but one line saying the job is
being recovered, and exit 75 (try again), as the help promises when another costsched
acts on the job. The job is left as a concurrent recovery leaves it (its lease held
elsewhere, its lost placement ended, the job `recovering`, or still `running` in the
moment before it is marked): no timing."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.cli import jobs as cli_jobs
from costsched.service.jobs.runs import STEP_LEASE_SECONDS, _open_placement
from costsched.store import PriceStore
from tests.costsched.service.test_start_secrets import launch_two

TO = "aws us-east-1b p3.2xlarge spot"


@pytest.fixture()
def recovering(cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001
    """`plain` running in us-east-1a, then taken up by another costsched's recovery: its
    lease held by that process and its lost placement ended."""
    store = PriceStore(str(db_path))
    launcher, _, plain = launch_two(store, tmp_path, monkeypatch,
                                    {"us-east-1a": 1.0, "us-east-1b": 2.0})
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    now = datetime.now(timezone.utc)
    assert store.leases.acquire(f"steps:{plain}", "other-host:4242", STEP_LEASE_SECONDS, now)
    yield cli, store, plain, now
    store.dispose()


def _lost(store: PriceStore, job: int, now: datetime, state: str) -> None:
    if state == "recovering":
        store.jobs.transition(job, "recovering", at=now, expect="running",
                              detail="recovery: instance preempted")
    store.jobs.end_placement(job, now)


@pytest.mark.parametrize("state", ["recovering", "running"])
@pytest.mark.parametrize("json_out", [False, True])
def test_a_job_being_recovered_is_said_so_and_exits_75(recovering, state: str,
                                                       json_out: bool) -> None:
    cli, store, job, now = recovering
    _lost(store, job, now, state)
    result = cli("migrate", "plain", "--to", TO, "--wait", "0",
                 *(["--json"] if json_out else []))
    assert result.exit_code == 75, result.output
    assert "No running job to consider" not in result.output
    assert (f"job {job} (plain) is being recovered by another costsched: only a running "
            "job is moved; ask again once it runs") in " ".join(result.output.split())
    assert _open_placement(store, job) is None  # nothing was moved or started here


def test_a_dry_run_and_a_policy_move_say_the_same(recovering) -> None:
    cli, store, job, now = recovering
    _lost(store, job, now, "recovering")
    for argv in (["--dry-run"], ["--wait", "0"]):
        result = cli("migrate", "plain", *argv)
        assert result.exit_code == 75, result.output
        assert "is being recovered by another costsched" in result.output


def test_every_running_job_unnamed_still_lists_the_others(recovering) -> None:
    """Without a job named, a job being recovered is not one of the running jobs asked
    about: the others are, as before."""
    cli, store, job, now = recovering
    _lost(store, job, now, "recovering")
    result = cli("migrate", "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    assert [a["name"] for a in json.loads(result.stdout)] == ["sec"]
