"""The missing-secret refusal of `costsched start` repeats the start as it was typed, with
the options that decide its outcome (`launch_secrets.start_typed`): run as printed, once
the shell has the value, it starts the job. The CLI over an in-memory launcher."""

from __future__ import annotations

import re
import shlex

import pytest

from costsched.launch_secrets import start_typed
from tests.costsched.cli.test_start_secrets import stopped  # noqa: F401 - a fixture
from tests.costsched.service.test_start_secrets import VALUE


def test_the_refusal_repeats_the_budget_typed_and_runs_as_printed(
        stopped, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    cli, store, _, sec, _ = stopped
    refused = cli("start", "sec", "--budget", "5.25", "--wait", "0")
    assert refused.exit_code == 2, refused.output
    said = " ".join(refused.output.split())
    assert "run `costsched start sec --budget 5.25` again" in said, said  # was: no --budget
    assert store.jobs.get(sec).state == "stopped"
    [hint] = re.findall(r"run `(costsched start [^`]*)` again", said)
    monkeypatch.setenv("KM_TOKEN", VALUE)
    started = cli(*shlex.split(hint)[1:], "--wait", "0")
    assert started.exit_code == 0, started.output
    assert store.jobs.get(sec).state == "running"


def test_the_start_typed_names_each_option_that_decides_its_outcome() -> None:
    assert start_typed("7") == "costsched start 7"
    assert start_typed("capped", 0.014) == "costsched start capped --budget 0.014"
    assert start_typed("x", 12.0, repack=True) == "costsched start x --budget 12 --repack"
    assert start_typed("x", 0.0000123) == "costsched start x --budget 1.23e-05"
