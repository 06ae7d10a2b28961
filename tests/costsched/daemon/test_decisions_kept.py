"""A running job is decided in one place: the supervisor's re-plan keeps each job's
decision (what, when, by whom, the dollars of staying and of moving, why), and `status`
shows that decision with its time, never deciding again; a job not decided where it runs
now (just launched, recovered) is said to await the next re-plan, or, with no daemon
watching, `migrate --dry-run` is named, and that hint works. In process, fake launcher."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from costsched.amounts import exact
from costsched.cli import app
from costsched.cli import jobs as cli_jobs
from costsched.config import Config
from costsched.daemon import status as daemon_status
from costsched.daemon.supervision import next_fire, recovery
from costsched.daemon.supervisor import SUPERVISOR_LEASE, Supervisor
from costsched.service import jobs as service
from costsched.store import PriceStore
from costsched.store.leases import holder_name
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

OFF = Config.model_validate({"daemon": {"autostart": False}})


@pytest.fixture()
def running(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, FakeLauncher, int]:
    """A spot job running on the fake launcher in us-east-1a, the cheapest zone."""
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 1.2},
               datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump({
        "name": "train", "throughputs": {"V100": 0.01}, "steps": 3000, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return store, launcher, job.id


def _shown(store: PriceStore, launcher: FakeLauncher, job: int) -> service.JobStatus:
    [s] = service.status(store, launcher, job, reconcile_first=False)
    return s


def test_the_supervisors_decision_is_what_status_shows(running, capsys) -> None:
    store, launcher, job = running
    shown = _shown(store, launcher, job)
    assert shown.decision is None and shown.next == ""  # launched: not decided there yet
    supervisor = Supervisor(store, OFF, holder=holder_name(), launchers=lambda _: launcher)
    assert "0 migrations started" in supervisor.replan()
    [kept] = store.decisions.latest([job]).values()
    placement = int(store.jobs.placements(job)["id"].iloc[-1])
    assert (kept.decided_by, kept.placement_id, kept.moves) == \
        ("the supervisor", placement, False)
    assert kept.stay_usd > 0 and kept.reason.startswith("stay: $")
    # `status` shows it, and decides nothing: the launcher's moves and the store's are as
    # they were, the decision's time is the supervisor's.
    calls = list(launcher.calls)
    shown = _shown(store, launcher, job)
    assert (shown.decision, shown.next) == (kept, kept.reason) and launcher.calls == calls
    cli_jobs._print_status([shown], json_out=False)
    text = " ".join(capsys.readouterr().out.split())  # a long line folds on the terminal
    assert " ".join(f"job {job} next: {kept.reason} (decided {kept.decided_at:%H:%M} UTC "
                    "by the supervisor)".split()) in text
    cli_jobs._print_status([shown], json_out=True)
    [document] = json.loads(capsys.readouterr().out)
    assert document["next"] == kept.reason
    assert document["decision"]["decided_by"] == "the supervisor"
    assert document["decision"]["decided_at"] == \
        kept.decided_at.isoformat().replace("+00:00", "Z")
    # The exact figure, as JSON writes money (12 significant digits: `amounts.exact`).
    assert document["decision"]["stay_usd"] == exact(kept.stay_usd)
    assert document["decision"]["moves"] is False and document["decision"]["choice"] is None


def test_a_recovered_job_awaits_the_next_decision_and_the_hint_works(
        running, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher, job = running
    Supervisor(store, OFF, holder=holder_name(), launchers=lambda _: launcher).replan()
    launcher.set(str(store.jobs.placements(job)["instance"].iloc[-1]), "preempted")
    assert any("recovery" in line for line in service.reconcile(store, launcher))
    shown = _shown(store, launcher, job)
    assert shown.instance_state == "running"
    assert shown.decision is None and shown.next == ""  # decided on the instance it lost
    at = datetime.now(timezone.utc)
    cli_jobs._print_status([shown], json_out=False, recovery=recovery(store, OFF, at))
    line = f"job {job} next: not decided yet: no daemon watches this store to decide it; " \
           f"`costsched migrate {job} --dry-run` shows what the policy would do now"
    assert line in capsys.readouterr().out
    # The hint, as printed, says what the policy would do now (and keeps nothing).
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda *_: launcher)
    out = CliRunner().invoke(app, ["migrate", str(job), "--dry-run", "--db", store.url])
    assert out.exit_code == 0, out.output
    assert f"job {job} (train): staying: $" in out.output  # "staying", said once
    # Asked to move: the verdict says "would move" once, where to, and the dollars.
    out = CliRunner().invoke(app, ["migrate", str(job), "--dry-run", "--db", store.url,
                                   "--to", "aws us-east-1b p3.2xlarge spot"])
    assert out.exit_code == 0, out.output
    assert (f"job {job} (train): would move to aws us-east-1b p3.2xlarge spot as asked: $"
            in out.output), out.output
    assert store.decisions.latest([job])[job].placement_id != shown.open_placement["id"]
    # A supervisor watching: it decides at its next re-plan, on schedule.replan.
    holder = holder_name()
    assert store.leases.acquire(SUPERVISOR_LEASE, holder, 60, at)
    store.daemons.register(holder, kind="auto", tasks=("replan",), watch_seconds=5, log="",
                           at=at)
    due = next_fire("30 * * * *", at)
    assert due is not None and due > at and due.minute == 30
    cli_jobs._print_status([shown], json_out=False, scheduled=daemon_status(store),
                           recovery=recovery(store, OFF, at))
    when = f"{due:%H:%M}" if due.date() == at.date() else f"{due:%Y-%m-%d %H:%M}"
    assert f"job {job} next: not decided yet: the supervisor decides it at its next " \
           f"re-plan, {when} UTC (schedule.replan 30 * * * *); `costsched migrate {job} " \
           "--dry-run` shows what it would decide now" in capsys.readouterr().out


def test_a_dry_run_and_a_move_to_a_named_offering_keep_no_decision(running) -> None:
    """Advice is not a decision; the user's own choice (`--to`) is not the policy's."""
    store, launcher, job = running
    service.migrate(store, launcher, job, dry_run=True)
    service.migrate(store, launcher, job, to="aws us-east-1b p3.2xlarge spot")
    assert store.decisions.latest([job]) == {}
