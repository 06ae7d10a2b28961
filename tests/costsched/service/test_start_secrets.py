"""A job with a --secret, stopped and started again, recovered or moved by a process that
may not hold the secret's value: what needs the value is refused before anything changes,
and a job that cannot be carried on for want of it waits, saying why and the fix, while
every other job is carried on and listed. In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched import launch_secrets
from costsched.model import InvalidInput
from costsched.redact import redact
from costsched.service import jobs as service
from costsched.service.jobs import steps
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

VALUE = "km-Zq8cR2vLx9TkEw4m"


def _spec(tmp_path: Path, name: str, secrets: list[str]) -> Path:
    spec = {"name": name, "throughputs": {"V100": 0.5}, "steps": 3600, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0},
            "task": {"secrets": secrets}}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def launch_two(store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               zones: dict[str, float] | None = None) -> tuple[FakeLauncher, int, int]:
    """`sec` launched with --secret KM_TOKEN=VALUE and `plain` with no secret (their ids),
    on a fake launcher over `zones`' prices; then this process forgets the value, as a
    later process (a shell without KM_TOKEN, a supervisor) has none."""
    set_prices(store, zones or {"us-east-1a": 1.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    monkeypatch.delenv("KM_TOKEN", raising=False)
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    launcher = FakeLauncher()
    root = str(tmp_path / "ckpt")
    [sec] = service.launch(store, _spec(tmp_path, "sec", ["KM_TOKEN"]), launcher=launcher,
                           checkpoint_root=root, secrets={"KM_TOKEN": VALUE})
    [plain] = service.launch(store, _spec(tmp_path, "plain", []), launcher=launcher,
                             checkpoint_root=root)
    assert sec.state == plain.state == "running"
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})  # a later process: no value held
    return launcher, sec.id, plain.id


@pytest.fixture()
def jobs(store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
         ) -> tuple[PriceStore, FakeLauncher, int, int]:
    """`launch_two` in two zones."""
    launcher, sec, plain = launch_two(store, tmp_path, monkeypatch,
                                      {"us-east-1a": 1.0, "us-east-1b": 2.0})
    return store, launcher, sec, plain


def _instance(store: PriceStore, job: int) -> str:
    return str(_open_placement(store, job)["instance"])


def test_a_start_without_the_secret_is_refused_before_anything_changes(jobs) -> None:
    store, launcher, sec, _ = jobs
    service.stop(store, launcher, sec)
    moves = len(store.moves.of_job(sec))
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, sec)
    line = ("job sec is not started: its secret KM_TOKEN has no value in this shell; set "
            "KM_TOKEN in your environment and run `costsched start sec` again (or give "
            "each with --secret NAME=VALUE)")
    assert str(refused.value) == line
    assert redact(line) == line  # no word of it is taken for a secret's value
    assert store.jobs.get(sec).state == "stopped"  # still startable
    assert len(store.moves.of_job(sec)) == moves  # no move made
    # status lists every job, and a start given the value takes the job up again
    assert {s.record.state for s in service.status(store, launcher)} == {"stopped",
                                                                         "running"}


def test_a_start_given_the_value_hands_it_on_as_a_launch_does(
        jobs, monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher, sec, _ = jobs
    service.stop(store, launcher, sec)
    assert service.start(store, launcher, sec,
                         secrets={"KM_TOKEN": VALUE}).state == "running"
    assert launch_secrets.held() == {"KM_TOKEN": VALUE}  # the supervisor it starts gets it
    service.stop(store, launcher, sec)
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    monkeypatch.setenv("KM_TOKEN", VALUE)  # KM_TOKEN=... costsched start sec
    assert service.start(store, launcher, sec).state == "running"
    assert launch_secrets.held() == {"KM_TOKEN": VALUE}


def test_a_start_refuses_a_secret_too_short_to_be_masked(
        jobs, monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher, sec, _ = jobs
    service.stop(store, launcher, sec)
    moves = len(store.moves.of_job(sec))
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    monkeypatch.setenv("KM_TOKEN", "k1")  # from the environment: said of it
    with pytest.raises(InvalidInput, match="^job sec: secret KM_TOKEN has a value in your "
                                           "environment shorter than 4 characters"):
        service.start(store, launcher, sec)
    assert store.jobs.get(sec).state == "stopped"
    assert len(store.moves.of_job(sec)) == moves


def test_a_start_refuses_a_secret_the_job_does_not_name(jobs) -> None:
    store, launcher, sec, _ = jobs
    service.stop(store, launcher, sec)
    with pytest.raises(InvalidInput, match="^--secret KM_TOKN is not a secret of job sec; "
                                           "expected one of KM_TOKEN.*did you mean"):
        service.start(store, launcher, sec, secrets={"KM_TOKN": VALUE})
    assert store.jobs.get(sec).state == "stopped"


def test_a_recovery_without_the_secret_waits_saying_why_once(
        jobs, monkeypatch: pytest.MonkeyPatch) -> None:
    store, launcher, sec, plain = jobs
    launcher.set(_instance(store, sec), "preempted")
    launcher.set(_instance(store, plain), "preempted")
    with launch_secrets.carried_by(  # as the supervisor's passes run
            "the supervisor", "`costsched daemon stop`, then `costsched daemon start` in a "
            "shell that sets {names}, gives {it}"):
        said = service.reconcile(store, launcher)  # never raises for one job
    assert store.jobs.get(plain).state == "running"  # the other job is recovered
    assert [m.kind for m in store.moves.of_job(plain)] == ["launch", "recovery"]
    record = store.jobs.get(sec)
    assert record.state == "recovering"  # not `running` with nothing running
    assert store.jobs.newest_open_placement(sec) is None
    line = ("recovery waits for secret KM_TOKEN (the supervisor's environment lacks it): "
            "`costsched daemon stop`, then `costsched daemon start` in a shell that sets "
            "KM_TOKEN, gives it")
    assert redact(line) == line
    assert [str(e) for e in said if e.job_id == sec] == [f"job {sec}: {line}"]
    # Said once: the next passes wait as quietly.
    for _ in range(3):
        assert [e for e in service.reconcile(store, launcher) if e.job_id == sec] == []
    shown = {s.record.id: s for s in service.status(store, launcher)}
    assert shown[sec].waits == line and shown[plain].waits == ""
    # A process that holds the value carries the recovery on; the line is no longer shown.
    monkeypatch.setenv("KM_TOKEN", VALUE)
    service.reconcile(store, launcher)
    assert store.jobs.get(sec).state == "running"
    assert store.jobs.newest_open_placement(sec) is not None
    assert {s.record.id: s.waits for s in service.status(store, launcher)}[sec] == ""


def test_status_in_a_shell_without_the_secret_lists_every_job_and_writes_nothing(
        jobs) -> None:
    store, launcher, sec, plain = jobs
    launcher.set(_instance(store, sec), "preempted")
    before = len(store.jobs.events(sec))
    shown = service.status(store, launcher)  # reconciles: must not raise
    assert [s.record.id for s in shown] == [sec, plain]
    events = store.jobs.events(sec)
    assert "secret" not in events["kind"].tolist()[before:]  # only a daemon says it


def test_a_move_left_waiting_by_an_older_costsched_does_not_stop_the_others(jobs) -> None:
    """A start an older costsched began without the value (the job `pending` with its
    move): every pass skips it, and carries the other jobs on."""
    store, launcher, sec, plain = jobs
    service.stop(store, launcher, sec)
    at = datetime.now(timezone.utc)
    store.jobs.transition(sec, "pending", at=at, expect="stopped", detail="started again")
    store.moves.create(sec, "start", [], at=at, detail="started again")
    launcher.set(_instance(store, plain), "succeeded")
    service.reconcile(store, launcher)
    assert store.jobs.get(plain).state == "succeeded"
    assert {s.record.id for s in service.status(store, launcher)} == {sec, plain}


def test_a_stopped_jobs_move_winds_down_without_the_secret(jobs) -> None:
    """A stop whose job's lease was held elsewhere leaves the move to wind down at the next
    pass: that needs no secret, so a process without it ends it too."""
    store, launcher, sec, _ = jobs
    at = datetime.now(timezone.utc)
    move = store.moves.create(sec, "migration", [], at=at,
                              source_instance=_instance(store, sec), detail="to elsewhere")
    store.jobs.transition(sec, "stopped", at=at, expect="running", detail="stopped")
    service.reconcile(store, launcher)
    assert store.moves.get(move.id).state == "cancelled"
    assert store.jobs.get(sec).state == "stopped"


def test_a_daemon_pass_leaves_a_launch_it_finds_stored_but_not_started_yet(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A supervisor's pass that runs the moment a launch has stored its job, before the
    launch starts it, leaves the job to the launch (which holds the job's lease from the
    moment it is stored): the pass has no value for its secret and would say it waits."""
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    monkeypatch.delenv("KM_TOKEN", raising=False)
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    launcher = FakeLauncher()
    passes: list[list] = []
    keep = launch_secrets.keep

    def keep_then_pass(job_id: int, values: dict[str, str]) -> None:
        with launch_secrets.carried_by("the supervisor", "give {names}"):
            passes.append(steps._resume_launches(store, launcher, None))  # held by no one
        keep(job_id, values)

    monkeypatch.setattr(launch_secrets, "keep", keep_then_pass)
    [job] = service.launch(store, _spec(tmp_path, "sec", ["KM_TOKEN"]), launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"), secrets={"KM_TOKEN": VALUE})
    assert passes == [[]]  # the pass said nothing and started nothing
    assert job.state == "running"
    assert [m.kind for m in store.moves.of_job(job.id)] == ["launch"]
    assert store.jobs.last_details([job.id], steps.SECRET_NOTE).get(job.id) in (None, "")
    assert store.leases.held() == []  # the launch gave up the job's lease once it started it


def test_a_start_whose_secret_from_the_shell_is_too_short_blames_the_shell(
        jobs, monkeypatch: pytest.MonkeyPatch) -> None:
    """The value comes from this shell's environment, not from the job's file nor from
    --secret: said so, with how to give the real one (start takes no --env)."""
    store, launcher, sec, _ = jobs
    service.stop(store, launcher, sec)
    monkeypatch.setenv("KM_TOKEN", "abc")
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, sec)
    line = str(refused.value)
    assert line == (
        "job sec: secret KM_TOKEN has a value in your environment shorter than 4 "
        "characters; a job's output is masked of secrets from 4 characters (a shorter one "
        "would mask ordinary words), so its log could show this one: set the real secret "
        "in your environment, or give it with --secret NAME=VALUE"), line
    assert "field" not in line and redact(line) == line
    assert store.jobs.get(sec).state == "stopped"


def test_a_start_given_a_secret_too_short_names_only_what_start_takes(
        jobs, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """`start --secret NAME=ab`: said of the option, with the fix `start` can take (it has
    no --env, which `launch` offers for a value that need not be secret)."""
    store, launcher, sec, _ = jobs
    service.stop(store, launcher, sec)
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, sec, secrets={"KM_TOKEN": "ab"})
    line = str(refused.value)
    assert line.startswith("--secret KM_TOKEN is given a value shorter than 4 characters"), line
    assert line.endswith(": give the real secret") and "--env" not in line, line
    assert "--env" not in cli("start", "--help").output  # (no option it could name)
    assert store.jobs.get(sec).state == "stopped"


_FIX = ("`costsched daemon stop`, then `costsched daemon start` in a shell that sets {names}, "
        "gives {it}")


def said_ahead(store: PriceStore, launcher: FakeLauncher, job: int) -> str:
    """The job's note as a supervisor without its secret's value says it, before a
    preemption comes (a pass of that supervisor, running the job)."""
    with launch_secrets.carried_by("the supervisor", _FIX):
        service.reconcile(store, launcher)
    said = {s.record.id: s.waits for s in service.status(store, launcher)}[job]
    assert said.startswith("a recovery would wait for secret KM_TOKEN")
    return said


def test_a_start_clears_what_a_daemon_said_its_run_before_would_wait_for(jobs) -> None:
    """The note spoke of the run before: a start begins another, given its secrets, and
    a daemon that lacks them says so again of this one."""
    store, launcher, sec, _ = jobs
    said_ahead(store, launcher, sec)
    service.stop(store, launcher, sec)
    service.start(store, launcher, sec, secrets={"KM_TOKEN": VALUE})
    assert {s.record.id: s.waits for s in service.status(store, launcher)}[sec] == ""
    launch_secrets.keep_only([])  # a supervisor that lacks it still, passing it again
    assert said_ahead(store, launcher, sec)

