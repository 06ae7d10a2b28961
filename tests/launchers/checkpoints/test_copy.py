"""A version streamed from one store into another (`copy_in`), against every store on its
real backend: it lands as the next version with the same manifest, or, when the bytes are
not the manifest's, nothing is committed."""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path

import pytest

from launchers.checkpoints import CorruptCheckpoint
from launchers.checkpoints.local import LocalStore
from tests.launchers.checkpoints.conftest import Backend


def local_with(tmp_path: Path, *payloads: bytes) -> LocalStore:
    store = LocalStore(tmp_path / "source")
    for data in payloads:
        (tmp_path / "checkpoint.npz").write_bytes(data)
        store.publish(tmp_path / "checkpoint.npz")
    return store


def test_a_version_copied_in_is_the_next_version_with_its_manifest(
        backend: Backend, tmp_path: Path) -> None:
    data = os.urandom(9 << 20)  # over one block, one chunk, one multipart upload
    source = local_with(tmp_path, b"old", data)
    backend.store.publish(_file(tmp_path / "there.bin", b"a version of its own"))
    [_, newest] = source.list()

    copied = backend.store.copy_in(source, newest)

    assert copied == replace(newest, version=2)  # same name, size, SHA-256 and time
    assert backend.store.list()[-1] == copied and backend.store.verify(copied)
    assert backend.get("v00000002/checkpoint.npz") == data
    restored = backend.store.restore(tmp_path / "restored")
    assert restored == copied
    assert (tmp_path / "restored" / "checkpoint.npz").read_bytes() == data


def test_each_store_streams_its_versions_out(backend: Backend, tmp_path: Path) -> None:
    published = backend.store.publish(_file(tmp_path / "checkpoint.npz", b"z" * 3_000_001))
    target = LocalStore(tmp_path / "target")

    copied = target.copy_in(backend.store, published)

    assert (copied.version, copied.sha256) == (1, published.sha256)
    assert hashlib.sha256(b"".join(backend.store.chunks(published))).hexdigest() == \
        published.sha256
    assert target.verify(copied)


def test_bytes_that_are_not_the_manifests_commit_nothing(backend: Backend,
                                                         tmp_path: Path) -> None:
    source = local_with(tmp_path, b"good bytes")
    [checkpoint] = source.list()
    (tmp_path / "source" / "v00000001" / "checkpoint.npz").write_bytes(b"evil bytes")
    longer = replace(checkpoint, size=checkpoint.size - 1)  # more bytes than it says

    for wrong in (checkpoint, longer):
        with pytest.raises(CorruptCheckpoint, match="copy of .* version 1"):
            backend.store.copy_in(source, wrong)

    assert backend.store.list() == []
    assert not any(key.startswith("v0") and key.endswith(".json")
                   for key in backend.listing())
    assert not [key for key in backend.listing() if "checkpoint.npz" in key]


def test_a_missing_source_is_corrupt_and_commits_nothing(backend: Backend,
                                                         tmp_path: Path) -> None:
    source = local_with(tmp_path, b"here, then gone")
    [checkpoint] = source.list()
    (tmp_path / "source" / "v00000001" / "checkpoint.npz").unlink()

    with pytest.raises(CorruptCheckpoint, match="data missing"):
        backend.store.copy_in(source, checkpoint)
    assert backend.store.list() == []


def _file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
