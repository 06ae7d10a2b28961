"""A hint that names `costsched start` of a job with secrets works when run: where this
shell has no value for one of them (their values are never stored), `status` says where
the start takes them from, under the hint; where it has them all, it says nothing more."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from costsched import launch_secrets
from costsched.cli.status_next import secrets_for_start
from costsched.redact import redact

HINT = "stopped at its own budget: ...; give it enough: `costsched start houses --budget 0.01`"


def job(secrets: list[str]) -> SimpleNamespace:
    record = SimpleNamespace(id=41, state="stopped",
                             spec={"spec": {"task": {"secrets": secrets}}})
    return SimpleNamespace(record=record, steps_not_reached="")


@pytest.fixture(autouse=True)
def new_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shell that was given nothing in this process and has neither secret set."""
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    for name in ("HF_TOKEN", "WANDB_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_a_secret_this_shell_lacks_is_said_under_the_start_hint() -> None:
    [line] = secrets_for_start(job(["HF_TOKEN"]), [HINT])
    assert line == ("a start takes its secret HF_TOKEN from your shell, which has no value "
                    "for it: set HF_TOKEN first, or add --secret NAME=VALUE for each to the "
                    "command")
    assert redact(line) == line  # nothing in it reads as a value to mask
    [two] = secrets_for_start(job(["HF_TOKEN", "WANDB_API_KEY"]), [HINT])
    assert "secrets HF_TOKEN, WANDB_API_KEY" in two and "set HF_TOKEN and WANDB_API_KEY" in two


def test_nothing_more_where_the_shell_has_them_or_no_hint_names_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert secrets_for_start(job(["HF_TOKEN"]), ["resumes from step 600"]) == []
    assert secrets_for_start(job([]), [HINT]) == []
    monkeypatch.setenv("HF_TOKEN", "x" * 24)
    assert secrets_for_start(job(["HF_TOKEN"]), [HINT]) == []
