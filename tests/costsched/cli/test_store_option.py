"""A command that reads a store never creates one: a --db file that does not exist is one
line naming it, and nothing is left behind. Commands that write make it and say so once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

READERS = {
    "plan": ["plan", str(EXAMPLES / "resnet50.yaml")],
    "prices show": ["prices", "show"],
    "prices history": ["prices", "history", "--instance", "p3.2xlarge"],
    "backtest": ["backtest", "--models", "A3C"],
    "status": ["status"],
    "report": ["report"],
    "migrate": ["migrate", "--dry-run"],
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_reader_given_a_missing_store_names_it_and_creates_nothing(name: str,
                                                                     tmp_path: Path) -> None:
    typo = tmp_path / "recorded-2002.sqlite"
    result = CliRunner().invoke(app, [*READERS[name], "--db", str(typo)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(typo) in lines[0] and "no such store" in lines[0]
    # what makes it, as it works with that --db: a launch makes it only when told to
    assert "`costsched launch JOB.yaml --new-store`" in lines[0], lines[0]
    assert not typo.exists()


def test_a_sqlite_url_to_a_missing_file_is_refused_too(tmp_path: Path) -> None:
    typo = tmp_path / "nope.sqlite"
    result = CliRunner().invoke(app, ["prices", "show", "--db", f"sqlite:///{typo}"])
    assert result.exit_code == 2 and "no such store" in result.output
    assert not typo.exists()


def test_a_writer_makes_the_store_and_says_so_once(tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite"
    argv = ["prices", "import", str(EXAMPLES / "demo" / "prices-before.csv"), "--whole",
            "--db", str(db)]
    first = CliRunner().invoke(app, [*argv, "--new-store"])
    assert first.exit_code == 0, first.output
    assert first.stderr.count("creating the store") == 1 and db.exists()
    second = CliRunner().invoke(app, argv)
    assert "creating the store" not in second.stderr
    shown = CliRunner().invoke(app, ["prices", "show", "--market", "spot", "--cloud", "aws",
                                     "--db", str(db)])  # (GCP's N1 sizes rank above it)
    assert shown.exit_code == 0 and "p3.2xlarge" in shown.stdout


# plan, prices show and prices history answer from the bundled prices without a store;
# status finds no jobs where nothing was launched yet, report and migrate nothing stored
# (test_hints_without_store).
@pytest.mark.parametrize("name", sorted(set(READERS) - {"plan", "prices show",
                                                        "prices history", "status",
                                                        "report", "migrate"}))
def test_a_reader_on_a_missing_default_store_names_it_and_creates_nothing(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COSTSCHED_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # platformdirs' user data
    result = CliRunner().invoke(app, READERS[name])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    expected = tmp_path / "data" / "costsched" / "prices.sqlite"
    assert len(lines) == 1 and "the default store: no such store" in lines[0]
    assert str(expected) in lines[0] and "costsched prices import" in lines[0]
    assert "`costsched launch JOB.yaml`" in lines[0]
    assert not (tmp_path / "data").exists()


def test_status_where_nothing_was_launched_yet_finds_no_jobs_and_creates_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COSTSCHED_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    result = CliRunner().invoke(app, ["status"])
    assert result.exit_code == 0, result.output
    assert "No jobs. `costsched launch JOB.yaml` starts one." in result.stdout
    # Which store was read, and that it does not exist: a forgotten --db or $COSTSCHED_DB
    # is seen.
    store = tmp_path / "data" / "costsched" / "prices.sqlite"
    none = (f"the default store {store} does not exist yet, and no --db, $COSTSCHED_DB or "
            "configured db names another: nothing was launched or stored with it")
    assert result.stderr.splitlines() == [f"note: {none}"]
    as_json = CliRunner().invoke(app, ["status", "--json"])
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["jobs"] == []
    assert as_json.stderr.splitlines() == [f"note: {none}"]
    one = CliRunner().invoke(app, ["status", "resnet"])
    assert one.exit_code == 2 and one.output.strip() == (
        f"error: job 'resnet': no job of that name ({none}; `costsched launch JOB.yaml` "
        "starts one)")
    assert not (tmp_path / "data").exists()


def test_a_reader_on_a_missing_costsched_db_names_the_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    typo = tmp_path / "recorded-2002.sqlite"
    monkeypatch.setenv("COSTSCHED_DB", str(typo))
    result = CliRunner().invoke(app, ["status"])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: $COSTSCHED_DB {typo}: no such store")
    assert not typo.exists()


@pytest.mark.parametrize("argv", [["plan", str(EXAMPLES / "resnet50.yaml"), "--json"],
                                  ["gpus", "V100", "--json"]])
def test_plan_and_gpus_without_a_store_use_the_list_prices_and_create_nothing(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "not-yet.sqlite"
    monkeypatch.setenv("COSTSCHED_DB", str(db))
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    assert result.stderr.count(f"no store at {db} yet: bundled list prices only") == 1
    assert json.loads(result.stdout) and not db.exists()


@pytest.mark.parametrize("argv", [["plan", "nothere.yaml"], ["gpus", "A10O"],
                                  ["prices", "history", "--instance", "g4dn.xlarge",
                                   "--since", "2026-02-01", "--until", "2026-01-01"]])
def test_input_refused_without_a_store_is_its_one_line_not_the_list_prices_note(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The note that the bundled list prices answer comes once the input is read: a
    refusal is the one line naming what is wrong."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COSTSCHED_DB", str(tmp_path / "not-yet.sqlite"))
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, result.output
    [line] = result.output.splitlines()
    assert line.startswith("error: ") and "bundled list prices" not in line, line


def test_importing_a_path_that_does_not_exist_is_one_line_and_makes_no_store(
        tmp_path: Path) -> None:
    db, typo = tmp_path / "new.sqlite", tmp_path / "prices-befor.csv"
    argv = ["prices", "import", str(EXAMPLES / "demo" / "prices-before.csv"), str(typo),
            "--db", str(db)]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2
    assert result.output == f"error: {typo}: cannot read: no such file or directory\n"
    assert not db.exists()


def test_importing_a_missing_file_names_the_close_file_beside_it(tmp_path: Path) -> None:
    (tmp_path / "myprices.csv").write_text("x\n")
    (tmp_path / "other.csv").write_text("x\n")
    typo = tmp_path / "myprice.csv"
    result = CliRunner().invoke(app, ["prices", "import", str(typo),
                                      "--db", str(tmp_path / "new.sqlite")])
    assert result.exit_code == 2
    assert result.output == (f"error: {typo}: cannot read: no such file or directory; "
                             f"did you mean '{tmp_path / 'myprices.csv'}'?\n")
