"""A cloud's SDK not installed, or its account not set up here, ends a command in one line
(what to install, what to do), whichever path met it: never a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from costsched.cli import app
from costsched.cli.common import friendly_errors
from costsched.clouds.base import NotSetUp, SdkMissing

BOTO3 = "aws: boto3 is not installed: pip install 'costsched[aws]'"


def _run(*argv: str):  # noqa: ANN202
    return CliRunner().invoke(app, list(argv), catch_exceptions=False)


def test_collect_booked_without_boto3_says_it_once(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # `import boto3` raises ImportError
    db = tmp_path / "new.sqlite"
    result = _run("collect", "--cloud", "aws", "--region", "us-east-1", "--booked", "--gpu",
                  "H100", "--new-store", "--db", str(db))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.output.count(BOTO3) == 1  # the prices' error: booked capacity adds none
    assert f"error: {BOTO3}" in result.stderr
    assert "Booked capacity: 0 offerings found in 0 asks, 0 new" in result.stdout
    assert list(tmp_path.glob("new.sqlite*")) == []  # nothing stored: no store left behind


def test_collect_booked_json_without_boto3_names_it(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    monkeypatch.setitem(sys.modules, "boto3", None)
    result = _run("collect", "--cloud", "aws", "--region", "us-east-1", "--booked", "--gpu",
                  "H100", "--new-store", "--db", str(tmp_path / "new.sqlite"), "--json")
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert out["booked"]["errors"] == [BOTO3] and out["booked"]["asked"] == 0


def test_bills_import_from_s3_without_boto3_is_one_line(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)
    result = _run("bills", "import", "s3://bucket/exports", "--new-store", "--db",
                  str(tmp_path / "s.sqlite"))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.stderr.strip().endswith(f"error: {BOTO3}")


@pytest.mark.parametrize("exc", [SdkMissing(BOTO3), NotSetUp(
    "gcp: no Google credentials found: run `gcloud auth application-default login`")])
def test_any_command_meeting_a_cloud_not_ready_ends_in_its_line(
        exc: Exception, capsys: pytest.CaptureFixture[str]) -> None:
    @friendly_errors
    def command() -> None:
        raise exc

    with pytest.raises(typer.Exit) as ended:
        command()
    assert ended.value.exit_code == 1
    assert capsys.readouterr().err.strip() == f"error: {exc}"


def test_other_errors_still_rise(capsys: pytest.CaptureFixture[str]) -> None:
    @friendly_errors
    def command() -> None:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        command()
