"""A mistake in the configuration names the whole key (a named budget's own keys
included), the values accepted and the close one; a key written outside its section, and
an environment override whose name is misspelt, are named with the key they meant."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.config import load
from costsched.model import InvalidInput


def refused(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> str:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(InvalidInput) as caught:
        load(path, env=env or {})
    message = str(caught.value)
    assert "\n" not in message
    return message.removeprefix(f"{path}: ")


@pytest.mark.parametrize(("text", "said"), [
    ('[budgets.named.vision]\nusd = 500\nperiod = "week"\n',
     "budgets.named.vision.period 'week': expected one of day, month, total"),
    ('[budgets.named.vision]\nusd = "500$"\n',
     "budgets.named.vision.usd '500$': expected a number"),
    ('[budgets.named.vision]\nusd = 5\nlabel = {team = "v"}\n',
     "unknown key budgets.named.vision.label: expected one of budgets.named.vision.usd, "
     "budgets.named.vision.period, budgets.named.vision.labels; did you mean 'labels'?"),
    ("[budgets.named]\nvision = 500\n",
     "budgets.named.vision 500: expected a table [budgets.named.vision] with keys usd, "
     "period, labels"),
    ('[budgets]\nat_cap = "stpo"\n',
     "budgets.at_cap 'stpo': expected one of stop, move; did you mean 'stop'?"),
    ('[launch]\nlauncher = "locla"\n',
     "launch.launcher 'locla': expected one of local, aws, gcp, azure, clouds; did you "
     "mean 'local'?"),
    ('[prices]\nstale_after = "a week"\n',
     "prices.stale_after 'a week': expected a duration: a number of hours (168), or one "
     "with its unit: '7d', '36h', '30min', '45s'"),
    ('[prices]\nstale_after = "2026-01-01T00:00Z"\n',
     "prices.stale_after '2026-01-01T00:00Z': expected a duration"),
    ("watch_seconds = 5\n", "unknown key watch_seconds: expected one of db, [collect], "),
])
def test_the_whole_key_the_choices_and_the_close_one(tmp_path: Path, text: str,
                                                     said: str) -> None:
    assert refused(tmp_path, text).startswith(said)


def test_no_choice_reads_as_broken_grammar(tmp_path: Path) -> None:
    message = refused(tmp_path, '[budgets]\nat_cap = "pause"\n')
    assert message == "budgets.at_cap 'pause': expected one of stop, move"


def test_a_key_outside_its_section_names_the_section(tmp_path: Path) -> None:
    assert refused(tmp_path, "watch_seconds = 5\n").endswith(
        "it is a key of [daemon]: did you mean 'daemon.watch_seconds'?")


def test_a_misspelt_override_is_refused_with_the_close_name(tmp_path: Path) -> None:
    message = refused(tmp_path, "", env={"COSTSCHED_DAEMON_WATCH_SECOND": "5"})
    assert message == ("env COSTSCHED_DAEMON_WATCH_SECOND: not a costsched setting; did you "
                       "mean 'COSTSCHED_DAEMON_WATCH_SECONDS'?")


def test_other_variables_of_costsched_pass(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("")
    env = {"COSTSCHED_AZURE_PRICES_URL": "http://127.0.0.1:1/", "COSTSCHED_DB": "x.sqlite",
           "COSTSCHED_INSTANCES": "/tmp/i", "COSTSCHED_DAEMON_WATCH_SECONDS": "5"}
    assert load(path, env=env).config.daemon.watch_seconds == 5


def test_a_misspelt_section_is_called_a_section_with_the_close_one(tmp_path: Path) -> None:
    said = refused(tmp_path, "[migraton]\nrestart_minutes = 10\n")
    assert said.startswith("unknown section [migraton]: expected one of [collect], "), said
    assert said.endswith("; did you mean [migration]?"), said
    assert "db" not in said and "unknown key" not in said  # db is a key, not a section
    # a key at the top stays a key, among db and the sections
    assert refused(tmp_path, "daemn = 5\n").startswith(
        "unknown key daemn: expected one of db, [collect], ")
    assert refused(tmp_path, "[zzzzzz]\nx = 1\n").endswith("[azure]")  # none close
