"""A COSTSCHED_* variable that is none of costsched's (a misspelt override) is said once
on stderr, in one line with the close name, rather than ignored without a word."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched import config
from costsched.cli import app
from costsched.config import env_names

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _none_said_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(env_names, "_SAID", set())


def _show(**env: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["config", "show"], env=env)
    return result.exit_code, result.stderr


def test_a_misspelt_section_is_said_with_its_settings() -> None:
    code, err = _show(COSTSCHED_DEAMON_INTERVAL="5")
    assert code == 0, err
    assert err.splitlines() == [
        "warning: env COSTSCHED_DEAMON_INTERVAL: not a costsched setting, ignored; did you "
        "mean a setting of [daemon]: COSTSCHED_DAEMON_AUTOSTART, COSTSCHED_DAEMON_IDLE_SECONDS, "
        "COSTSCHED_DAEMON_LOG_FILE, COSTSCHED_DAEMON_WATCH_SECONDS?"]


def test_a_misspelt_name_is_said_with_the_close_one_once() -> None:
    code, err = _show(COSTSCHED_POLCY_MARGIN="0.1", COSTSCHED_DEAMON_WATCH_SECONDS="5")
    assert code == 0, err
    assert err.splitlines() == [
        "warning: env COSTSCHED_DEAMON_WATCH_SECONDS: not a costsched setting, ignored; did "
        "you mean 'COSTSCHED_DAEMON_WATCH_SECONDS'?",  # not _IDLE_SECONDS: far from it
        "warning: env COSTSCHED_POLCY_MARGIN: not a costsched setting, ignored; did you mean "
        "'COSTSCHED_POLICY_MARGIN'?"]
    config.load(env={"COSTSCHED_POLCY_MARGIN": "0.1"})  # a second read says it no more
    assert _show(COSTSCHED_POLCY_MARGIN="0.1") == (0, "")


def test_costscheds_own_variables_are_not_said() -> None:
    assert _show(COSTSCHED_INSTANCES="/tmp/x", COSTSCHED_JOB_ID="3", COSTSCHED_CONFIG="",
                 COSTSCHED_POLICY_MARGIN="0.1") == (0, "")


def test_every_variable_costsched_reads_is_known() -> None:
    """Each COSTSCHED_ name the code, the docs and the examples use is a setting or one of
    costsched's own variables: none of them is ever said to be misspelt."""
    used = set()
    for folder in ("costsched", "launchers", "price_collectors", "scripts", "bench",
                   "notebooks", "docs", "examples"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".md", ".ipynb", ".toml", ".yaml", ".sh", ".html"):
                used |= set(re.findall(r"COSTSCHED_[A-Z0-9_]*[A-Z0-9]", path.read_text()))
    said = [name for name in sorted(used) if env_names.unknown_line(name)]
    assert said == sorted(MISSPELT)  # only the docs' example of one


MISSPELT = {"COSTSCHED_DEAMON_WATCH_SECONDS"}  # docs/configuration.md's example
