"""The local directory store: atomic writes, version claims and unwritable places."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from costsched.model import InvalidInput
from launchers.checkpoints import layout
from launchers.checkpoints.local import LocalStore

as_root = os.geteuid() == 0 if hasattr(os, "geteuid") else False


def source(tmp_path: Path, data: bytes = b"weights") -> Path:
    path = tmp_path / "job" / "checkpoint.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_publish_creates_the_directory_and_leaves_no_temp_files(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "a" / "b")
    store.publish(source(tmp_path))
    store.publish(source(tmp_path, b"more"))
    names = sorted(p.relative_to(tmp_path / "a" / "b").as_posix()
                   for p in (tmp_path / "a" / "b").rglob("*"))
    assert names == ["v00000001", "v00000001.json", "v00000001/checkpoint.npz",
                     "v00000002", "v00000002.json", "v00000002/checkpoint.npz"]


def test_a_directory_that_cannot_be_made_is_one_line_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    store = LocalStore(blocker / "store")
    with pytest.raises(InvalidInput, match=f"checkpoint directory {blocker / 'store'}: cannot"
                                           " be created") as err:
        store.publish(source(tmp_path))
    assert "\n" not in str(err.value)
    assert blocker.read_text() == "not a directory"


@pytest.mark.skipif(as_root, reason="root writes into read-only directories")
def test_a_read_only_directory_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    root.chmod(0o555)
    try:
        with pytest.raises(InvalidInput, match=f"checkpoint directory {root}: not writable"):
            LocalStore(root).publish(source(tmp_path))
    finally:
        root.chmod(0o755)


@pytest.mark.skipif(as_root, reason="root reads any file")
def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    src = source(tmp_path)
    src.chmod(0o000)
    try:
        with pytest.raises(InvalidInput, match=f"checkpoint file {src}: cannot be read"):
            LocalStore(tmp_path / "store").publish(src)
    finally:
        src.chmod(0o644)


def test_a_destination_that_cannot_be_made_is_refused(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    checkpoint = store.publish(source(tmp_path))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InvalidInput, match=f"checkpoint destination {blocker / 'd'}"):
        store.fetch(checkpoint, blocker / "d")


def test_a_claimed_version_directory_is_skipped(tmp_path: Path) -> None:
    """A publisher that claimed version 1 (its directory) and has not committed yet keeps
    it: the next publisher takes 2."""
    root = tmp_path / "store"
    (root / layout.version_dir(1)).mkdir(parents=True)
    checkpoint = LocalStore(root).publish(source(tmp_path))
    assert checkpoint.version == 2
    assert LocalStore(root).list() == [checkpoint]


def test_a_store_made_from_a_relative_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           ) -> None:
    monkeypatch.chdir(tmp_path)
    store = LocalStore("ckpts")
    store.publish(source(tmp_path))
    assert (tmp_path / "ckpts" / "v00000001.json").is_file()
