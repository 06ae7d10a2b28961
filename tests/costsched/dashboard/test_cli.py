"""`costsched dashboard` refuses in one line what it cannot serve safely or at all."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from costsched.cli import dashboard as command


def test_another_address_needs_a_token(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(command.ENV_TOKEN, raising=False)
    result = cli("dashboard", "--host", "0.0.0.0")
    assert result.exit_code != 0
    assert "needs a token" in result.output and "COSTSCHED_DASHBOARD_TOKEN" in result.output
    assert "Traceback" not in result.output


def test_actions_need_a_token(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(command.ENV_TOKEN, raising=False)
    result = cli("dashboard", "--actions")
    assert result.exit_code != 0 and "--actions" in result.output


def test_a_short_or_missing_token_file_is_named(cli, tmp_path: Path) -> None:
    short = tmp_path / "token"
    short.write_text("abc\n")
    result = cli("dashboard", "--actions", "--token-file", str(short))
    assert result.exit_code != 0 and "at least 16 characters" in result.output
    assert "abc" not in result.output  # the token itself is never printed
    result = cli("dashboard", "--token-file", str(tmp_path / "none"))
    assert result.exit_code != 0 and "cannot be read" in result.output


def test_without_the_extra_it_says_which_to_install(cli, monkeypatch: pytest.MonkeyPatch
                                                    ) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(command, "find_spec",
                        lambda name: None if name == "uvicorn" else real(name))
    result = cli("dashboard")
    assert result.exit_code == 1
    assert result.output.strip() == command.MISSING
    assert "pip install 'costsched[dashboard]'" in result.output
