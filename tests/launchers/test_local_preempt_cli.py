"""`python -m launchers.local preempt JOB`: the instances it looks in by default are
costsched's own (the local launcher's default), with no --base-dir to give."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchers.local import main


def test_preempt_looks_where_the_local_launcher_keeps_its_instances(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    assert main(["preempt", "7"]) == 1
    assert capsys.readouterr().err == (f"job 7: no running instance under "
                                       f"{tmp_path / 'instances'}\n")
    assert main(["notice", "7", "--base-dir", str(tmp_path / "other")]) == 1
    assert str(tmp_path / "other") in capsys.readouterr().err


def test_a_job_named_rather_than_numbered_is_one_line(capsys: pytest.CaptureFixture) -> None:
    assert main(["preempt", "mlp8"]) == 2
    assert capsys.readouterr().err == ("job 'mlp8': expected the job's id (a number, as "
                                       "`costsched status` lists it)\n")
