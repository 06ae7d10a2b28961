"""On a fresh install (no store made yet), every command that plan and status print as a
hint, and every command the did-you-mean of a command looked for under another name points
at, works as printed: one that lists what is stored says that none is stored yet (exit code
0), names on stderr the default store it read and that it does not exist, and makes no
store; `risk import`, which stores, makes it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import COMMAND_FOR, app

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "signals"
TASK = """\
name: kws
resources:
  accelerators: T4:1
  use_spot: true
  cloud: aws
run: python train.py
"""
HINT = re.compile(r"`(costsched [^`]+)`")
# Hints that reach a cloud, the network or start a process of their own: tested elsewhere.
ELSEWHERE = ("costsched collect", "costsched quotas --refresh", "costsched catalog refresh",
             "costsched daemon", "costsched launch", "costsched plan", "costsched check",
             "costsched start", "costsched stop")


def _fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("COSTSCHED_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # platformdirs' user data
    return tmp_path / "data" / "costsched" / "prices.sqlite"


def _run(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(argv))
    return result.exit_code, " ".join(result.output.split())


def _apart(*argv: str) -> tuple[int, str, str]:
    """The exit code, stdout and stderr, each on one line."""
    result = CliRunner().invoke(app, list(argv))
    return result.exit_code, " ".join(result.stdout.split()), " ".join(result.stderr.split())


def _no_store_note(store: Path) -> str:
    """The note a listing prints on stderr where the default store is not made yet."""
    return (f"note: the default store {store} does not exist yet, and no --db, "
            "$COSTSCHED_DB or configured db names another: nothing was launched or stored "
            "with it")


def _runnable(command: str) -> list[str] | None:
    """The hint's arguments as typed, a placeholder given a value; None for a hint that is
    tested elsewhere."""
    if command.startswith(ELSEWHERE):
        return None
    command = command.replace("--kind advisor|placement|eviction", "--kind advisor") \
        .replace("--kind KIND", "--kind advisor") \
        .replace("FILE", str(FIXTURES / "spot-advisor-data.json")) \
        .replace("--instance TYPE", "--instance g4dn.xlarge")
    return shlex.split(command)[1:]


def test_every_hint_of_plan_and_status_works_on_a_fresh_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _fresh(tmp_path, monkeypatch)
    task = tmp_path / "sky.yaml"
    task.write_text(TASK)
    printed = [_run("plan", str(task)), _run("plan", str(task), "--explain", "1"),
               _run("status")]
    hints = {h for _, text in printed for h in HINT.findall(text)}
    hints |= {h for text in COMMAND_FOR.values() for h in HINT.findall(text)}
    assert "costsched risk show" in hints and "costsched report" in hints, hints
    readers = sorted(h for h in hints if _runnable(h) is not None and "import" not in h)
    assert len(readers) >= 4, readers
    for hint in readers:
        code, said = _run(*_runnable(hint))  # type: ignore[misc]
        assert code == 0, (hint, said)
        assert "no such store" not in said, (hint, said)
        assert not store.exists(), hint  # (a look makes no store)


def test_risk_show_on_a_fresh_install_says_none_is_stored_yet_and_how_they_come(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _fresh(tmp_path, monkeypatch)
    code, said, note = _apart("risk", "show")
    assert code == 0, said
    assert said.startswith("No spot risk signals stored yet; `costsched risk import FILE "
                           "--kind KIND` stores a saved document"), said
    assert note == _no_store_note(store)  # which store was read, and that there is none
    code, said, note = _apart("risk", "show", "--json")
    assert code == 0 and json.loads(said) == {"signals": []}
    assert note == _no_store_note(store)
    assert not store.exists()


@pytest.mark.parametrize("argv", [["report"], ["report", "--billed"],
                                  ["migrate", "--dry-run"], ["prices", "availability"]])
def test_a_listing_on_a_fresh_install_says_what_an_empty_store_says(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _fresh(tmp_path, monkeypatch)
    code, said, note = _apart(*argv)
    assert code == 0, said
    assert note == _no_store_note(store)  # which store was read, and that there is none
    empty = tmp_path / "empty.sqlite"
    from costsched.store import PriceStore

    PriceStore(str(empty)).dispose()
    also, expected, none = _apart(*argv, "--db", str(empty))
    assert also == 0 and none == "", expected  # a store that exists: no note
    times = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")  # (a report is up to now)
    assert times.sub("T", said) == times.sub("T", expected)
    assert not store.exists()


def test_a_store_named_that_does_not_exist_is_still_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(tmp_path, monkeypatch)
    typo = tmp_path / "recorded-2002.sqlite"
    for argv in (["risk", "show"], ["report"], ["prices", "availability"]):
        code, said = _run(*argv, "--db", str(typo))
        assert code == 2 and "no such store" in said and str(typo) in said, (argv, said)
    monkeypatch.setenv("COSTSCHED_DB", str(typo))
    code, said = _run("risk", "show")
    assert code == 2 and said.startswith(f"error: $COSTSCHED_DB {typo}: no such store"), said
    assert not typo.exists()


def test_risk_import_as_the_plan_prints_it_makes_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _fresh(tmp_path, monkeypatch)
    code, said = _run("risk", "import", str(tmp_path / "none.json"), "--kind", "advisor")
    assert code == 2 and "none.json" in said and not store.exists(), said  # refused: none made
    code, said = _run("risk", "import", str(FIXTURES / "spot-advisor-data.json"),
                      "--kind", "advisor")
    assert code == 0, said
    assert said.count("creating the store") == 1 and store.exists()
    code, listed = _run("risk", "show")
    assert code == 0 and "Spot risk signals: 5" in listed, listed
