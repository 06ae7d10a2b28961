"""`costsched migrate` of a job with a secret, from a shell without its value: the line
says how to give it, and `--secret` (as `start` takes it) gives it; the value is never
shown. The CLI over an in-memory launcher."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.cli import jobs as cli_jobs
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.service.test_start_secrets import VALUE, launch_two

TO = "aws us-east-1b p3.2xlarge spot"


@pytest.fixture()
def running(cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001
    """`sec` (a --secret KM_TOKEN) and `plain` running in us-east-1a, in the CLI's store;
    this process holds no value for KM_TOKEN (a new shell)."""
    store = PriceStore(str(db_path))
    launcher, sec, plain = launch_two(store, tmp_path, monkeypatch,
                                      {"us-east-1a": 1.0, "us-east-1b": 2.0})
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    yield cli, store, sec
    store.dispose()


def _zone(store: PriceStore, job: int) -> str:
    return str(_open_placement(store, job)["zone"])


def test_a_move_without_the_value_says_how_to_give_it_and_exits_2(running) -> None:
    """As `start` of the job does for the same missing value: a script can tell that the
    move it asked for did not happen. A dry run, and a job that stays, exit 0."""
    cli, store, sec = running
    held = cli("migrate", "sec", "--to", TO, "--wait", "0")
    assert held.exit_code == 2, held.output
    assert ("not moved: this shell has no value for secret KM_TOKEN; set KM_TOKEN in your "
            "environment, or give each with --secret NAME=VALUE, and ask again") in held.output
    assert _zone(store, sec) == "us-east-1a"
    assert "--secret" in cli("migrate", "--help").output  # the option the line names
    said = cli("migrate", "sec", "--to", TO, "--wait", "0", "--json")
    assert said.exit_code == 2, said.output
    [advice] = json.loads(said.stdout)
    assert advice["started"] is False and advice["held_back"] == "secret"
    asked = cli("migrate", "sec", "--to", TO, "--dry-run")
    assert asked.exit_code == 0, asked.output
    assert "would move" in asked.output
    stays = cli("migrate", "sec", "--wait", "0")  # the policy keeps it in the cheaper zone
    assert stays.exit_code == 0, stays.output
    assert "staying" in stays.output


def test_a_move_given_the_value_is_made_and_the_value_never_shown(running) -> None:
    cli, store, sec = running
    moved = cli("migrate", "sec", "--to", TO, "--secret", f"KM_TOKEN={VALUE}", "--json")
    assert moved.exit_code == 0, moved.output
    assert VALUE not in moved.output
    [advice] = json.loads(moved.stdout)
    assert advice["started"] is not None, advice
    assert _zone(store, sec) == "us-east-1b"


@pytest.mark.parametrize(("argv", "line"), [
    (["--secret", f"KM_TOKN={VALUE}"], "error: --secret KM_TOKN is not a secret of job sec; "
     "expected one of KM_TOKEN; did you mean 'KM_TOKEN'?"),
    (["--secret", "KM_TOKEN="], "error: --secret KM_TOKEN is given empty; give its value "
     "(--secret NAME=VALUE), or set it in your environment"),
    (["--secret", "KM_TOKEN"], "error: not set in your environment: --secret KM_TOKEN; give "
     "it as NAME=VALUE, or set it before launching"),
])
def test_a_bad_secret_is_one_line_and_nothing_moves(running, argv: list[str],
                                                     line: str) -> None:
    cli, store, sec = running
    refused = cli("migrate", "sec", "--to", TO, *argv)
    assert refused.exit_code == 2
    assert refused.output == line + "\n"
    assert _zone(store, sec) == "us-east-1a"
