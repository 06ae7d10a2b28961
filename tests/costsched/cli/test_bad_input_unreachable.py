"""A store on a server that does not answer, named by $COSTSCHED_DB to a command that can
answer from the bundled list prices: one line naming the store and $COSTSCHED_DB as where
it was given (its password masked), exit code 75 (try again), no traceback."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from costsched.cli import app

DOWN = "postgresql+psycopg://me:s3cret@127.0.0.1:1/db"  # nothing listens on port 1


@pytest.mark.parametrize("argv", [["gpus"], ["prices", "show"], ["plan", "job.yaml"]])
def test_a_server_that_does_not_answer_is_one_line_exit_75(
        monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    monkeypatch.setenv("COSTSCHED_DB", DOWN)
    result = CliRunner().invoke(app, argv, prog_name="costsched")
    assert result.exit_code == 75, (result.output, result.exception)
    assert "Traceback" not in result.output and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("error: $COSTSCHED_DB postgresql+psycopg://me:***@127.0.0.1:1/db: "
                           ), line  # (named as where it was given)
    assert "s3cret" not in result.output
