"""A checkpoint's files in subfolders ('latest/state.json'): named by their path below the
checkpoint directory, stored under the version's folder at that path, restored into the
same subfolders, pruned and copied like any file; and a manifest naming a file outside the
directory (absolute, '..', empty parts) is refused. Against every store."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from costsched.model import InvalidInput
from launchers.checkpoints import layout
from launchers.checkpoints.base import Checkpoint
from launchers.checkpoints.local import LocalStore
from tests.launchers.checkpoints.conftest import Backend

TS = "2024-01-01T00:00:00+00:00"
VOCAB = b"the a of\n" * 1000


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file()}


def test_files_in_subfolders_are_stored_restored_and_pruned_at_their_paths(
        backend: Backend, tmp_path: Path) -> None:
    job = tmp_path / "job"
    first = backend.store.publish_files({
        "vocab/words.txt": write(job / "vocab" / "words.txt", VOCAB),
        "latest/state.json": write(job / "latest" / "state.json", b'{"step": 1}'),
        "top.txt": write(job / "top.txt", b"1")})
    second = backend.store.publish_files(
        {"latest/state.json": write(job / "latest" / "state.json", b'{"step": 2}'),
         "top.txt": write(job / "top.txt", b"2")}, carried=first.parts)

    assert [(p.name, p.version) for p in second.parts] == [
        ("latest/state.json", 2), ("top.txt", 2), ("vocab/words.txt", 1)]
    assert {"v00000001/vocab/words.txt", "v00000002/latest/state.json"} <= backend.listing()
    manifest = json.loads(backend.get("v00000002.json"))
    assert {"name": "vocab/words.txt", "size": len(VOCAB),
            "sha256": hashlib.sha256(VOCAB).hexdigest(), "version": 1} in manifest["files"]
    assert backend.store.list() == [first, second] and backend.store.verify(second)

    dest = tmp_path / "resume"
    assert backend.store.restore(dest) == second
    assert tree(dest) == {"latest/state.json": b'{"step": 2}', "top.txt": b"2",
                          "vocab/words.txt": VOCAB}

    backend.store.prune(keep=1)  # version 1's folder keeps the vocabulary alone
    assert backend.listing() == {"v00000001/vocab/words.txt", "v00000002/latest/state.json",
                                 "v00000002/top.txt", "v00000002.json"}
    if isinstance(backend.store, LocalStore):  # no empty folder left behind
        assert not (backend.store.root / "v00000001" / "latest").exists()


def test_subfolders_are_copied_into_another_store(backend: Backend, tmp_path: Path) -> None:
    here = LocalStore(tmp_path / "here")
    version = here.publish_files({
        "checkpoint-500/model.bin": write(tmp_path / "m", b"m" * 1000),
        "checkpoint-500/rng/state.json": write(tmp_path / "r", b"{}")})

    copy = backend.store.copy_in(here, version)

    assert backend.listing() == {"v00000001/checkpoint-500/model.bin",
                                 "v00000001/checkpoint-500/rng/state.json", "v00000001.json"}
    assert backend.store.restore(tmp_path / "moved") == copy
    assert tree(tmp_path / "moved") == {"checkpoint-500/model.bin": b"m" * 1000,
                                        "checkpoint-500/rng/state.json": b"{}"}


@pytest.mark.parametrize("name", ["../evil", "/etc/evil", "a/../../evil", "a//b", "a/./b",
                                  "a/", "..", "a\\..\\evil"])
def test_a_manifest_naming_a_file_outside_the_directory_is_refused(
        backend: Backend, tmp_path: Path, name: str) -> None:
    good = backend.store.publish(write(tmp_path / "job" / "ok.bin", b"ok"))
    data = b"planted"
    backend.put("v00000002/evil", data)
    backend.put("v00000002.json", json.dumps(
        {"version": 2, "name": "x", "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
         "published_at": TS, "files": [{"name": name, "size": len(data), "version": 2,
                                        "sha256": hashlib.sha256(data).hexdigest()}]}).encode())

    assert backend.store.list() == [good]  # the planted one is skipped, with a warning
    dest = tmp_path / "deep" / "resume"
    assert backend.store.restore(dest) == good
    assert tree(tmp_path / "deep") == {"resume/ok.bin": b"ok"}
    assert not (tmp_path / "evil").exists()


@pytest.mark.parametrize("name", ["../evil", "/tmp/evil", "a/../../evil", "", "a//b"])
def test_a_fetch_never_writes_outside_its_directory(tmp_path: Path, name: str) -> None:
    store = LocalStore(tmp_path / "store")
    crafted = Checkpoint(version=1, name=name, size=1, sha256="0" * 64,
                         published_at=layout.now())
    with pytest.raises(InvalidInput, match="checkpoint name"):
        store.fetch_part(crafted, tmp_path / "deep" / "dest")
    assert not (tmp_path / "evil").exists() and not (tmp_path / "deep" / "evil").exists()


def test_a_folder_linked_outside_is_not_fetched_into(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    version = store.publish_files({"latest/state.json": write(tmp_path / "s", b"{}")})
    dest = tmp_path / "dest"
    (tmp_path / "outside").mkdir()
    dest.mkdir()
    (dest / "latest").symlink_to(tmp_path / "outside")
    with pytest.raises(InvalidInput, match="leads outside"):
        store.fetch(version, dest)
    assert list((tmp_path / "outside").iterdir()) == []


def test_names_a_manifest_may_hold() -> None:
    for name in ("a.bin", "latest/state.json", "checkpoint-500/rng/x.pt", "a..b/c..d"):
        assert layout.check_name(name) == name
    clash = layout.check_names(["a", "a/b", "c"])
    assert clash == "a is both a file and a folder"
    assert layout.check_names(["a/b", "a/c", "ab"]) == ""
