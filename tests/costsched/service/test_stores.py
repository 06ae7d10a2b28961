"""Opening the store for a call: the configuration's [store] section says how long to wait."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.config import StoreConfig
from costsched.service.stores import open_store
from costsched.store import database


def test_open_store_waits_as_the_configuration_in_effect_says(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[store]\nbusy_seconds = 2.5\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    monkeypatch.delenv("COSTSCHED_STORE_BUSY_SECONDS", raising=False)
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    from_config = open_store(url)
    given = open_store(url, StoreConfig(busy_seconds=0.5))
    try:
        assert database._BUSY_SECONDS[from_config.engine] == 2.5
        assert database._BUSY_SECONDS[given.engine] == 0.5  # a section given wins
    finally:
        from_config.dispose()
        given.dispose()
