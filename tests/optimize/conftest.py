"""Keep the user's own throughput measurements out of these tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.throughput import ENV_USER_FILE


@pytest.fixture(autouse=True)
def _isolated_throughputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_USER_FILE, str(tmp_path / "user-throughputs.csv"))
