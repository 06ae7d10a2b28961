"""The secrets a process holds for its jobs (`launch_secrets`, by job id) are not left by
one test for the next of its process: every test's store numbers its jobs from 1, and a
value held for another test's job 1 would start this one's (`missing` says none lacks)."""

from __future__ import annotations

import pytest

from costsched import launch_secrets

VALUE = "hf_an_earlier_tests_value"


def test_a_launch_holds_its_jobs_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    launch_secrets.keep(1, {"HF_TOKEN": VALUE})  # as a launch of job 1 does, left held
    assert launch_secrets.missing(1, ["HF_TOKEN"]) == []


def test_the_next_test_holds_none_of_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert launch_secrets.held_for(1) == {}
    assert launch_secrets.missing(1, ["HF_TOKEN"]) == ["HF_TOKEN"]
    assert VALUE not in launch_secrets.held().values()  # (what a supervisor started now gets)
