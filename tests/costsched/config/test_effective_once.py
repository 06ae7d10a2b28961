"""A command reads its configuration once: `effective()` hands every later caller the one
it read while the file (its content), $COSTSCHED_CONFIG and the COSTSCHED_* overrides are
the same; any change of them is read at the next call (a daemon sees an edited file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.config import effective
from costsched.model import InvalidInput


@pytest.fixture()
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    path.write_text("[policy]\nmargin = 0.2\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(path))
    return path


def test_the_same_configuration_is_read_once(config_file: Path) -> None:
    first = effective()
    assert first.policy.margin == 0.2
    assert effective() is first


def test_a_changed_file_is_read_again(config_file: Path) -> None:
    assert effective().policy.margin == 0.2
    config_file.write_text("[policy]\nmargin = 0.3\n")  # the same size, at once
    assert effective().policy.margin == 0.3


def test_a_changed_override_or_file_name_is_read_again(config_file: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
    assert effective().daemon.autostart is False
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "true")
    assert effective().daemon.autostart is True
    other = tmp_path / "other.toml"
    other.write_text("[policy]\nmargin = 0.4\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(other))
    assert effective().policy.margin == 0.4


def test_a_bad_configuration_is_refused_at_every_call(config_file: Path) -> None:
    effective()
    config_file.write_text("[policy]\nmargin = 'lots'\n")
    for _ in range(2):
        with pytest.raises(InvalidInput, match="policy.margin"):
            effective()
    config_file.unlink()  # a file named and gone
    with pytest.raises(InvalidInput, match="no such file"):
        effective()
