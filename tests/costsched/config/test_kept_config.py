"""The configuration a run validated is kept between runs (`costsched.kept`) while its file
and overrides are the same and it holds no secret: the next run reads it without building
the sections' validators. A configuration with a secret is never written to the cache."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from costsched.config import Config, load
from costsched.kept import cache_dir
from costsched.model import InvalidInput


@pytest.fixture()
def validations(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The data each validation of a whole configuration was given."""
    seen: list[dict] = []
    original = Config.model_validate.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Config], data: dict, *args: object, **kwargs: object) -> Config:
        seen.append(data)
        return original(cls, data, *args, **kwargs)

    monkeypatch.setattr(Config, "model_validate", classmethod(counted))
    return seen


def test_the_same_configuration_is_validated_once(tmp_path: Path,
                                                  validations: list[dict]) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[policy]\nmargin = 0.2\n")
    env = {"COSTSCHED_DAEMON_AUTOSTART": "false"}
    first = load(path, env).config
    again = load(path, env).config
    assert again == first and again.policy.margin == 0.2 and again.daemon.autostart is False
    assert len(validations) == 1
    path.write_text("[policy]\nmargin = 0.3\n")  # a changed file is validated again
    assert load(path, env).config.policy.margin == 0.3 and len(validations) == 2
    assert load(path, {}).config.daemon.autostart is True and len(validations) == 3


def test_a_configuration_with_a_secret_is_not_kept(tmp_path: Path,
                                                   validations: list[dict]) -> None:
    env = {"COSTSCHED_DB": "postgresql+psycopg://u:hunter2@db.example/costsched"}
    for _ in range(2):
        assert load(None, env).config.db == env["COSTSCHED_DB"]
    assert len(validations) == 2
    assert not any(b"hunter2" in f.read_bytes() for f in cache_dir().glob("*")
                   if f.is_file())


def test_a_bad_value_is_refused_in_one_line_each_time(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[policy]\nmargin = 'lots'\n")
    for _ in range(2):
        with pytest.raises(InvalidInput, match="policy.margin"):
            load(path, {})


def test_a_kept_configuration_is_read_without_building_the_validators(tmp_path: Path) -> None:
    code = ("from costsched.config import load, Config\nload(None, {})\n"
            "print(Config.__pydantic_complete__)")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path),
           "PATH": "/usr/bin:/bin"}
    outs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=True).stdout.strip() for _ in range(2)]
    assert outs == ["True", "False"]  # built by the first run, not by the second
    for _ in range(2):  # the kept configuration is the one validated
        assert load(None, {}).config == Config.model_validate({})
