"""`costsched start` of a job with a secret, in a shell with and without its value, and
`status` of a store where a daemon cannot carry one job on for want of its secret: one line
each, the job left as it was, every job listed. The CLI over an in-memory launcher."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched import launch_secrets
from costsched.cli import jobs as cli_jobs
from costsched.service import jobs as service
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.service.test_start_secrets import VALUE, launch_two


@pytest.fixture()
def stopped(cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001
    """`sec` (a --secret KM_TOKEN) stopped and `plain` running, in the CLI's store; this
    process holds no value for KM_TOKEN (a new shell)."""
    store = PriceStore(str(db_path))
    launcher, sec, plain = launch_two(store, tmp_path, monkeypatch)
    service.stop(store, launcher, sec)
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    yield cli, store, launcher, sec, plain
    store.dispose()


def test_start_without_the_value_says_how_to_give_it_and_leaves_the_job_stopped(
        stopped) -> None:
    cli, store, _, sec, _ = stopped
    refused = cli("start", "sec", "--wait", "0")
    assert refused.exit_code == 2
    assert refused.output == (
        "error: job sec is not started: its secret KM_TOKEN has no value in this shell; set "
        "KM_TOKEN in your environment and run `costsched start sec` again (or give each "
        "with --secret NAME=VALUE)\n")
    assert store.jobs.get(sec).state == "stopped"
    again = cli("start", "sec", "--wait", "0")  # still a stopped job: the same line
    assert again.output == refused.output
    assert "--secret" in cli("start", "--help").output  # the option the line names


def test_start_with_the_value_runs_the_job(stopped, monkeypatch: pytest.MonkeyPatch) -> None:
    cli, store, _, sec, _ = stopped
    started = cli("start", "sec", "--secret", f"KM_TOKEN={VALUE}", "--wait", "0", "--json")
    assert started.exit_code == 0, started.output
    assert VALUE not in started.output
    assert store.jobs.get(sec).state == "running"
    cli("stop", "sec")
    monkeypatch.setenv("KM_TOKEN", VALUE)  # KM_TOKEN=... costsched start sec
    assert cli("start", "sec", "--wait", "0").exit_code == 0
    assert store.jobs.get(sec).state == "running"


def test_status_lists_every_job_and_says_why_one_waits(
        stopped, monkeypatch: pytest.MonkeyPatch) -> None:
    cli, store, launcher, sec, plain = stopped
    monkeypatch.setenv("KM_TOKEN", VALUE)
    assert cli("start", "sec", "--wait", "0").exit_code == 0
    monkeypatch.delenv("KM_TOKEN")
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    launcher.set(str(_open_placement(store, sec)["instance"]), "preempted")
    with launch_secrets.carried_by("the supervisor", "`costsched daemon stop`, then "
                                   "`costsched daemon start` in a shell that sets {names}, "
                                   "gives {it}"):
        service.reconcile(store, launcher)  # the supervisor's pass, without the value
    shown = cli("status")
    assert shown.exit_code == 0, shown.output
    rows = {line.split("│")[2].strip(): line.split("│")[3].strip()
            for line in shown.output.splitlines() if line.count("│") > 5
            and line.split("│")[1].strip().isdigit()}
    assert rows == {"sec": "recovering", "plain": "running"}
    assert (f"  job {sec}: recovery waits for secret KM_TOKEN (the supervisor's environment "
            "lacks it): `costsched daemon stop`, then `costsched daemon start` in a shell "
            "that sets KM_TOKEN, gives it") in shown.output
    doc = {j["id"]: j for j in json.loads(cli("status", "--json").stdout)["jobs"]}
    assert doc[sec]["waits"].startswith("recovery waits for secret KM_TOKEN")
    assert doc[plain]["waits"] is None


def test_a_mistyped_secret_given_alone_gets_the_close_name_first(
        stopped, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--secret KM_TOKN` (unset in this shell) misspells the job's KM_TOKEN: said first,
    rather than that KM_TOKN is not set; the job left stopped."""
    cli, store, _, sec, _ = stopped
    monkeypatch.delenv("KM_TOKN", raising=False)
    refused = cli("start", "sec", "--secret", "KM_TOKN", "--wait", "0")
    assert refused.exit_code == 2
    assert refused.output == ("error: --secret KM_TOKN is not a secret of job sec; "
                              "expected one of KM_TOKEN; did you mean 'KM_TOKEN'?\n")
    assert store.jobs.get(sec).state == "stopped"


def test_status_without_a_daemon_says_a_recovery_waits_for_this_shells_secret(
        stopped, monkeypatch: pytest.MonkeyPatch) -> None:
    """No daemon watches, the shell lacks the job's secret, its instance is preempted:
    `status` says the recovery waits for the secret and how to give it, and the fix it
    names for recovery names the secret too; given it, the next `status` recovers it."""
    cli, store, launcher, sec, _ = stopped
    monkeypatch.setenv("KM_TOKEN", VALUE)
    assert cli("start", "sec", "--wait", "0").exit_code == 0
    monkeypatch.delenv("KM_TOKEN")
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})  # a new shell, no supervisor
    launcher.set(str(_open_placement(store, sec)["instance"]), "preempted")
    shown = cli("status")
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert ("so a preempted job waits for the next `costsched status`; `costsched daemon "
            "start` from a shell that sets KM_TOKEN (a job's secret: a supervisor takes it from "
            "its environment) starts one.") in text, text
    assert (f"job {sec}: recovery waits for secret KM_TOKEN (this shell lacks it): set "
            "KM_TOKEN in your environment and run `costsched status` again, "
            "or `costsched daemon start` from such a shell") in text, text
    assert store.jobs.get(sec).state == "recovering"
    assert "secret" not in store.jobs.events(sec)["kind"].tolist()  # said, not stored
    monkeypatch.setenv("KM_TOKEN", VALUE)  # as the line says
    again = cli("status")
    assert again.exit_code == 0 and VALUE not in again.output
    assert store.jobs.get(sec).state == "running"
    assert "recovery waits for secret" not in again.output
