"""`costsched report` (belongs in tests/costsched/cli/test_report.py; kept beside the report's
tests until the lead moves it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.store import PriceStore
from tests.costsched.report.scenario import BETA, fill


@pytest.fixture()
def filled_db(db_path: Path) -> Path:
    store = PriceStore(str(db_path))
    fill(store)
    store.dispose()
    return db_path


def test_tables_in_the_terminal_show_user_text_as_text(cli, filled_db: Path) -> None:
    result = cli("report", "--until", "2024-06-02T02:00Z")
    assert result.exit_code == 0, result.output
    for title in ("Spend per job", "Spend per cloud", "Spend per day", "Migrations, "
                  "recoveries and starts", "Egress per move",
                  "Jobs near, over or stopped at their budget"):
        assert title in result.output
    assert BETA in result.output  # markup printed as it is, not interpreted
    assert "$7.20" in result.output and "over" in result.output


def test_json_and_html(cli, filled_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = cli("report", "--until", "2024-06-02T02:00Z", "--job", "alpha", "--json",
                 "--html", out)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [j["name"] for j in data["jobs"]] == ["alpha"]
    assert data["jobs"][0]["usd"] == pytest.approx(7.2)
    assert data["budgets"][0]["status"] == "near"
    assert data["moves"][0]["kind"] == "migration"
    assert data["until"] == "2024-06-02T02:00:00Z"
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_bad_values_name_the_option(cli, filled_db: Path) -> None:
    result = cli("report", "--since", "soon")
    assert result.exit_code == 2
    assert "--since 'soon': expected an ISO 8601 time" in result.stderr
    result = cli("report", "--job", "nope")
    assert result.exit_code == 2 and "--job 'nope': no job" in result.stderr


@pytest.mark.parametrize("where", ["missing/r.html", "."])
def test_html_to_a_path_it_cannot_write_is_refused_before_the_report_is_built(
        cli, filled_db: Path, tmp_path: Path, monkeypatch, where: str) -> None:  # noqa: ANN001
    def built(*args: object, **kwargs: object) -> None:
        raise AssertionError("the report was built before its path was checked")

    monkeypatch.setattr("costsched.cli.report.build", built)
    path = tmp_path / where
    result = cli("report", "--html", str(path))
    assert result.exit_code == 2, result.output
    reason = "Is a directory" if where == "." else "No such file or directory"
    assert result.stderr.strip().splitlines() == [
        f"error: {path}: cannot write the report ({reason})"], result.stderr
