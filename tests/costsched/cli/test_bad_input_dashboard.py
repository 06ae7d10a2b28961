"""`dashboard --token-file` given a file that holds no token (empty, or not text): one line
naming the option, the file and what is accepted, exit code 2, no traceback, no server."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore

pytest.importorskip("uvicorn")


@pytest.mark.parametrize("content", [b"", b"  \n", b"\xff\xfe\x00t"], ids=["empty", "blank",
                                                                         "not-text"])
def test_a_token_file_without_a_token_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 content: bytes) -> None:
    import uvicorn

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("served")

    monkeypatch.setattr(uvicorn.Server, "run", never)
    db = tmp_path / "s.db"
    PriceStore(str(db)).dispose()
    token = tmp_path / "token"
    token.write_bytes(content)
    result = CliRunner().invoke(app, ["dashboard", "--token-file", str(token), "--port", "0",
                                      "--db", str(db)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Traceback" not in result.output and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: --token-file {token}: "), line
    assert "expected the token as UTF-8 text" in line
