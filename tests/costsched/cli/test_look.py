"""`status` of a store with nothing to show and `logs` of a job start at once: they read the
SQLite file directly and import neither pandas, scipy, SQLAlchemy nor the planner, and say
exactly what the store-backed path says."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched import daemon
from costsched.cli import app
from costsched.service import booking, glance
from costsched.service.store_files import ENV_DB as LIGHT_ENV_DB
from costsched.store import ENV_DB, PriceStore, schema

HEAVY = ("pandas", "scipy", "sqlalchemy", "matplotlib", "cvxpy")
AT = datetime(2026, 1, 1, tzinfo=timezone.utc)
KEY = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")


def run_cli(argv: list[str], env: dict[str, str]) -> tuple[str, list[str]]:
    """The command's stdout, and the heavy packages it loaded, in a fresh interpreter."""
    probe = ("import sys\nfrom costsched.cli import app\n"
             f"try:\n    app({argv!r})\nexcept SystemExit as exc:\n    assert not exc.code\n"
             f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})),"
             " file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, check=True)
    return out.stdout, out.stderr.splitlines()[-1].split()  # the command's own lines before


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    import os

    db = tmp_path / "store.sqlite"
    PriceStore(str(db)).dispose()
    monkeypatch.setenv("COSTSCHED_DB", str(db))
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    return {**os.environ, "COLUMNS": "200"}


def finished_job(db: str, instances: Path, name: str = "hello") -> int:
    """A job that ran on the local launcher and ended, its output left in its instance."""
    store = PriceStore(db)
    job = store.jobs.create(name, {"name": name, "launcher": "local"}, 10.0, at=AT)
    instance = f"{job}-1"
    store.jobs.place(job, KEY, gpu_model="V100", gpu_count=1, at=AT, usd_per_hour=1.0,
                     reason="launch", instance=instance)
    store.jobs.end_placement(job, AT)
    store.jobs.transition(job, "succeeded", at=AT)
    store.dispose()
    folder = instances / instance
    folder.mkdir(parents=True)
    (folder / "instance.json").write_text(json.dumps({"job_id": job}))
    (folder / "job.log").write_text("one\ntwo\nthree\n")
    return job


def test_status_of_an_empty_store_loads_no_heavy_library_and_says_so(env) -> None:  # noqa: ANN001
    out, heavy = run_cli(["status"], env)
    assert heavy == []
    assert "No jobs." in out and "never run" in out


def test_the_quick_status_says_what_the_store_says(env, monkeypatch) -> None:  # noqa: ANN001
    quick = [CliRunner().invoke(app, ["status", *flag]).stdout for flag in ([], ["--json"])]
    monkeypatch.setattr(glance, "nothing_to_show", lambda db: None)  # the store's path
    full = [CliRunner().invoke(app, ["status", *flag]).stdout for flag in ([], ["--json"])]
    assert quick == full
    assert json.loads(quick[1])["jobs"] == []


def test_a_store_with_a_job_or_a_daemon_run_is_not_empty(tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite")
    PriceStore(db).dispose()
    assert glance.nothing_to_show(db) is True
    store = PriceStore(db)
    store.task_runs.start("collect", "test", at=AT)
    store.dispose()
    assert glance.nothing_to_show(db) is False
    other = str(tmp_path / "jobs.sqlite")
    finished_job(other, tmp_path / "instances")
    assert glance.nothing_to_show(other) is False
    assert glance.nothing_to_show(str(tmp_path / "missing.sqlite")) is None
    assert glance.nothing_to_show("postgresql+psycopg://u@h/db") is None


def test_logs_of_a_job_loads_no_heavy_library(env, tmp_path: Path) -> None:  # noqa: ANN001
    job = finished_job(env["COSTSCHED_DB"], tmp_path / "instances")
    for named in ("hello", str(job)):
        out, heavy = run_cli(["logs", named, "--tail", "2"], env)
        assert (out, heavy) == ("two\nthree\n", [])


def test_logs_of_a_name_two_jobs_share_asks_the_store(env, tmp_path: Path) -> None:  # noqa: ANN001
    db = env["COSTSCHED_DB"]
    first = finished_job(db, tmp_path / "instances")
    second = finished_job(db, tmp_path / "instances2")
    assert glance.last_instance(db, "hello") is None  # ambiguous: the store's rule decides
    assert glance.last_instance(db, str(second))[:2] == ("local", f"{second}-1")
    assert glance.last_instance(db, str(first))[:2] == ("local", f"{first}-1")
    assert glance.last_instance(db, "nosuchjob") is None
    result = CliRunner().invoke(app, ["logs", "nosuchjob"])
    assert result.exit_code == 2 and "no job of that name" in result.output


def test_the_light_names_are_the_stores_and_the_daemons() -> None:
    tables = (schema.jobs.name, schema.placements.name, schema.task_runs.name,
              schema.daemons.name, schema.bookings.name)
    assert tables == (glance.JOBS, glance.PLACEMENTS, glance.TASK_RUNS, glance.DAEMONS,
                      glance.BOOKINGS)
    assert glance.HELD_STATES == booking.HELD_STATES
    assert glance.TASKS == daemon.TASKS and glance.JOBSTORE_TABLE == daemon.JOBSTORE_TABLE
    assert LIGHT_ENV_DB == ENV_DB


def test_logs_of_a_job_without_output_say_so(env, tmp_path: Path) -> None:  # noqa: ANN001
    """A job that failed before its command wrote a line: not a silent nothing."""
    job = finished_job(env["COSTSCHED_DB"], tmp_path / "instances")
    (tmp_path / "instances" / f"{job}-1" / "job.log").write_text("")
    result = CliRunner().invoke(app, ["logs", "hello"])
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr == (f"job hello: no output on instance {job}-1 (`costsched status "
                             "hello` says how the job stands)\n")


@pytest.mark.parametrize("follow", [[], ["--follow"]])
def test_logs_mask_a_secret_the_job_printed(env, tmp_path: Path, monkeypatch,  # noqa: ANN001
                                            follow: list[str]) -> None:
    """A job launched with --secret API_KEY that prints it: `logs`, from the environment
    the launch took it from, masks its value (the store keeps its name only)."""
    value = "sk-live-TOPSECRET-12345"
    monkeypatch.setenv("API_KEY", value)
    db, instances = env["COSTSCHED_DB"], tmp_path / "instances"
    job = finished_job(db, instances)
    store = PriceStore(db)
    store.jobs.create("other", {}, 1.0, at=AT)  # the spec below is the job's own
    with store.engine.begin() as conn:
        conn.execute(schema.jobs.update().where(schema.jobs.c.id == job).values(
            spec=json.dumps({"spec": {"name": "hello", "task": {"secrets": ["API_KEY"]}},
                             "launcher": "local"})))
    store.dispose()
    (instances / f"{job}-1" / "job.log").write_text(f"key is {value}\ndone\n")
    result = CliRunner().invoke(app, ["logs", "hello", *follow])
    assert result.exit_code == 0, result.output
    assert value not in result.stdout and "key is ***\ndone\n" in result.stdout


@pytest.mark.parametrize("follow", [[], ["--follow"], ["--all"]])
def test_logs_mask_an_env_named_like_a_secret_in_every_form(env, tmp_path: Path,  # noqa: ANN001
                                                           follow: list[str]) -> None:
    """A value the job's file gives an env named like a secret (stored with the job, as
    `launch` warns) is masked wherever the job prints it; its other envs' are not."""
    value = "hf_filetoken_55555"
    db, instances = env["COSTSCHED_DB"], tmp_path / "instances"
    job = finished_job(db, instances)
    store = PriceStore(db)
    with store.engine.begin() as conn:
        conn.execute(schema.jobs.update().where(schema.jobs.c.id == job).values(
            spec=json.dumps({"spec": {"name": "hello", "envs": {"HF_TOKEN": value,
                                                                 "EPOCHS": "3"}},
                             "launcher": "local"})))
    store.dispose()
    (instances / f"{job}-1" / "job.log").write_text(
        f"HF_TOKEN={value}\napi_key: {value}\n--token {value}\nsaw {value}\nEPOCHS=3\n")
    result = CliRunner().invoke(app, ["logs", "hello", *follow])
    assert result.exit_code == 0, result.output
    assert value not in result.stdout
    assert "HF_TOKEN=***\napi_key: ***\n--token ***\nsaw ***\nEPOCHS=3\n" in result.stdout


@pytest.mark.parametrize("argv", [["logs", "nosuchjob"], ["logs", "helo", "--all"],
                                  ["logs", "99"], ["status", "nosuchjob"], ["status", "99"]])
def test_a_job_the_store_does_not_hold_is_refused_as_the_store_refuses_it(
        env, tmp_path: Path, monkeypatch, argv: list[str]) -> None:  # noqa: ANN001
    """Refused from one read of the file, in the words of the store's path, without
    loading SQLAlchemy."""
    finished_job(env["COSTSCHED_DB"], tmp_path / "instances")
    quick = CliRunner().invoke(app, argv)
    monkeypatch.setattr(glance, "missing_job", lambda db, job: None)  # the store's path
    full = CliRunner().invoke(app, argv)
    assert (quick.exit_code, quick.stderr) == (full.exit_code, full.stderr)
    assert quick.exit_code == 2 and "in the store" in quick.stderr
    probe = ("import sys\nfrom costsched.cli import app\n"
             f"try:\n    app({argv!r})\nexcept SystemExit as exc:\n    assert exc.code == 2\n"
             f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})),"
             " file=sys.stdout)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, check=True)
    assert out.stdout.split() == []


def test_a_store_not_told_quickly_is_asked(env, tmp_path: Path) -> None:  # noqa: ANN001
    db = env["COSTSCHED_DB"]
    job = finished_job(db, tmp_path / "instances")
    assert glance.missing_job(db, "hello") is None and glance.missing_job(db, str(job)) is None
    assert glance.missing_job(db, "helo") == ("job 'helo': no job of that name in the store; "
                                              "did you mean 'hello'?")
    assert glance.missing_job(str(tmp_path / "missing.sqlite"), "helo") is None
    assert glance.missing_job("postgresql+psycopg://u@h/db", "helo") is None


@pytest.mark.parametrize("argv", [["status", "99"], ["logs", "99"], ["stop", "99"]])
def test_an_id_the_store_does_not_hold_names_the_ids_it_does(
        env, tmp_path: Path, argv: list[str]) -> None:  # noqa: ANN001
    """As a name no job has names the jobs, an id no job has names the ids there are."""
    job = finished_job(env["COSTSCHED_DB"], tmp_path / "instances")
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2
    assert result.stderr == (f"error: job 99: no such job in the store; it holds job {job} "
                             "(`costsched status` shows it)\n")
