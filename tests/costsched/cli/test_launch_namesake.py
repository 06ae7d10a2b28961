"""A launch under the name of a stopped job starts a new job afresh; the stopped one keeps
its checkpoint but cannot start while the new one runs (one live job a name): the launch
says so in one line, with how to resume the stopped one."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app

TASK = """\
name: fc
resources:
  accelerators: V100:1
run: sleep 60
"""


def test_a_launch_over_a_stopped_namesake_says_it_starts_afresh(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path, db = tmp_path / "task.yaml", str(tmp_path / "s.sqlite")
    path.write_text(TASK)

    def cli(*args: str):  # noqa: ANN202
        return CliRunner().invoke(app, [*args, "--db", db])

    try:
        first = cli("launch", str(path), "--new-store", "--wait", "0")
        assert first.exit_code == 0, first.output
        assert "note: job" not in first.stderr  # no namesake yet
        assert cli("stop", "fc").exit_code == 0
        again = cli("launch", str(path), "--wait", "0")
        assert again.exit_code == 0, again.output
        lines = [x for x in again.stderr.splitlines() if x.startswith("note: job 1 (fc)")]
        assert lines == ["note: job 1 (fc) is stopped at step 0 and keeps its checkpoint; "
                         "job 2, launched now under its name, started afresh, and job 1 "
                         "cannot start while job 2 runs (`costsched stop 2`, then `costsched "
                         "start 1` resumes it; `costsched start` of a stopped job, not "
                         "`launch`, resumes one)"], again.stderr
        refused = cli("start", "1")
        assert refused.exit_code != 0  # as the note says, while job 2 runs
        assert cli("stop", "2").exit_code == 0
        assert cli("start", "1").exit_code == 0  # and as it says, once job 2 is stopped
    finally:
        cli("stop", "fc")
        cli("stop", "1")
