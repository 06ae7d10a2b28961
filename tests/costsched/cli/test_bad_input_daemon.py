"""`daemon --log` naming a path no log can be written to (a folder, a path under a file):
one line naming the option, the path and what is accepted, exit code 2, no traceback, and
nothing run."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("where", ["folder", "afile/daemon.log"])
def test_a_log_path_that_cannot_be_written_is_refused(cli, tmp_path: Path, where: str) -> None:  # noqa: ANN001
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile").write_text("")
    log = tmp_path / where
    result = cli("daemon", "--once", "--log", log)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: --log {log}: cannot write it ("), line
    assert line.endswith("): expected the path of a file to append the log to"), line
