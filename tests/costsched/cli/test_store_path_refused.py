"""A store path that cannot be made is refused in one line naming the real cause (a file
where a folder of the path should be), and no "creating the store" is said before it."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store.database import StoreError, resolve_url

TASK = "name: refused\nresources:\n  accelerators: V100:1\nrun: echo done\n"


def test_a_path_under_a_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "sky.yaml").write_text("name: x\n")
    db = tmp_path / "sky.yaml" / "deeper" / "x.sqlite"
    with pytest.raises(StoreError) as refused:
        resolve_url(str(db))
    assert str(refused.value) == (f"store {db}: {tmp_path / 'sky.yaml'} is a file, not a "
                                  "folder; choose a writable location")


def _launch(tmp_path: Path, db: Path) -> object:
    task = tmp_path / "task.yaml"
    task.write_text(TASK)
    return CliRunner().invoke(app, ["launch", str(task), "--db", str(db), "--new-store", "--wait",
                                      "0"])


def test_a_launch_on_a_store_under_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "sky.yaml").write_text("name: x\n")
    db = tmp_path / "sky.yaml" / "x.sqlite"
    result = _launch(tmp_path, db)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: store {db}: {tmp_path / 'sky.yaml'} is a file, not a folder; choose a "
        "writable location"]


def test_a_folder_that_refuses_to_be_made_is_not_announced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As under /proc: the folder above looks writable, yet making one in it fails."""
    refusing = tmp_path / "proc"
    refusing.mkdir()
    real_mkdir = Path.mkdir

    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        if refusing in self.parents:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    db = refusing / "costsched" / "store.sqlite"
    result = _launch(tmp_path, db)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: store {db}: cannot create its directory {db.parent} (No such file or "
        "directory); choose a writable location"]


def test_a_new_folder_is_announced_once_and_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    db = tmp_path / "new" / "deeper" / "store.sqlite"
    result = _launch(tmp_path, db)
    assert result.exit_code == 0, result.output
    assert result.stderr.count(f"creating the store {db}") == 1 and db.exists()
    stopped = CliRunner().invoke(app, ["stop", "refused", "--db", str(db)])
    assert stopped.exit_code in (0, 2), stopped.output  # 2: it had finished already
