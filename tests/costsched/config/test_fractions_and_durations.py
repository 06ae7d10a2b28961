"""Fractions are refused above 1 (5 meant as 5 % would be 500 %), wherever they are given;
durations take a unit ('7d', '168h', '30min') and `config show` says each one's unit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.config import DURATION_UNITS, KEYS, load

FRACTION = "expected a fraction from 0 to 1: 0.05 is 5 %"


def _show(tmp_path: Path, text: str = "", env: dict[str, str] | None = None,
          *args: str) -> tuple[int, str]:
    path = tmp_path / "config.toml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["config", "show", "--config", str(path), *args],
                                env=env)
    return result.exit_code, result.output


@pytest.mark.parametrize("key", ["policy.margin", "bills.difference_threshold",
                                 "bills.rate_tolerance"])
def test_a_fraction_above_one_is_refused_in_the_file_and_the_environment(
        tmp_path: Path, key: str) -> None:
    section, name = key.split(".")
    code, out = _show(tmp_path, f"[{section}]\n{name} = 5\n")
    assert code == 2, out
    assert out.strip() == f"error: {tmp_path / 'config.toml'}: {key} 5: {FRACTION}"
    env = {"COSTSCHED_" + key.replace(".", "_").upper(): "5"}
    code, out = _show(tmp_path, "", env)
    assert code == 2, out
    assert out.strip() == f"error: env {next(iter(env))}: {key} '5': {FRACTION}"
    assert _show(tmp_path, f"[{section}]\n{name} = 0.05\n")[0] == 0
    assert _show(tmp_path, f"[{section}]\n{name} = 1\n")[0] == 0


def test_migrate_refuses_a_margin_above_one_with_the_same_words(cli) -> None:  # noqa: ANN001
    result = cli("migrate", "--margin", "5")
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: --margin 5: {FRACTION}"


def test_every_duration_key_has_a_unit() -> None:
    timed = {k for k in KEYS if k.endswith(("_seconds", "_minutes"))} | {"prices.stale_after"}
    assert timed == set(DURATION_UNITS)


@pytest.mark.parametrize(("key", "given", "value"), [
    ("prices.stale_after", "7d", 168.0), ("prices.stale_after", "168h", 168.0),
    ("prices.stale_after", "7", 7.0), ("prices.stale_after", "30min", 0.5),
    ("prices.stale_after", "7 days", 168.0),
    ("daemon.watch_seconds", "2min", 120.0), ("daemon.watch_seconds", "45", 45.0),
    ("daemon.watch_seconds", "30s", 30.0),
    ("migration.restart_minutes", "1h", 60.0), ("migration.restart_minutes", "5", 5.0),
    ("store.busy_seconds", "1m", 60.0),
])
def test_a_duration_takes_a_unit_in_the_file_and_the_environment(
        tmp_path: Path, key: str, given: str, value: float) -> None:
    section, name = key.split(".")
    env = {"COSTSCHED_" + key.replace(".", "_").upper(): given}
    path = tmp_path / "c.toml"
    path.write_text("")
    assert load(path, env=env).value(key) == value
    path.write_text(f'[{section}]\n{name} = "{given}"\n')
    assert load(path, env={}).value(key) == value


def test_a_duration_that_is_none_is_refused_in_one_line(tmp_path: Path) -> None:
    code, out = _show(tmp_path, '[prices]\nstale_after = "a week"\n')
    assert code == 2
    assert out.strip().startswith(f"error: {tmp_path / 'config.toml'}: prices.stale_after "
                                  "'a week': expected a duration")


def test_config_show_says_each_durations_unit(tmp_path: Path) -> None:
    code, out = _show(tmp_path, "[migration]\nlost_work_minutes = 90\n", None)
    assert code == 0, out
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in out.splitlines() if line.count("│") >= 3}
    assert rows["prices.stale_after"] == "168 h (7 days)"
    assert rows["daemon.watch_seconds"] == "30 s"
    assert rows["migration.lost_work_minutes"] == "90 min (1.5 h)"
    assert rows["store.busy_seconds"].endswith(" s")
    code, out = _show(tmp_path, "", None, "--json")
    values = json.loads(out)["values"]
    assert values["prices.stale_after"] == {"value": 168.0, "unit": "h", "from": "default"}
