"""An error that comes from an option's value names the option: a launcher whose SDK is
not installed (`--launcher aws`), a store that is no SQLite database (`--db FILE`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

JOB = """\
name: named
model: ResNet-50 (batch size 64)
steps: 1000
"""


def test_a_launcher_without_its_sdk_is_named_by_its_option(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    for name in [m for m in sys.modules if m == "boto3" or m.startswith("boto3.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "boto3", None)  # not installed: ImportError
    path = tmp_path / "job.yaml"
    path.write_text(JOB)
    result = cli("launch", path, "--launcher", "aws", "--wait", "0")
    assert result.exit_code == 2
    assert result.output.strip() == ("error: --launcher aws: boto3 is not installed: "
                                     "pip install 'costsched[aws]'"), result.output


@pytest.mark.parametrize("command", [["status"], ["report"], ["stop", "1"]])
def test_a_file_that_is_no_store_is_named_by_the_option_that_gave_it(
        cli, tmp_path: Path, command: list[str]) -> None:  # noqa: ANN001
    not_a_store = tmp_path / "train.py"
    not_a_store.write_text("print('training')\n")
    result = cli(*command, "--db", not_a_store)
    assert result.exit_code == 2
    assert result.output.strip() == (f"error: --db {not_a_store}: not a SQLite database; "
                                     "give the path of a store or of a new file")
    assert not_a_store.read_text() == "print('training')\n"  # left as it was
