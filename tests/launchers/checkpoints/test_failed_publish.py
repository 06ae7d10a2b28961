"""A publish that fails half-way (the disk or the bucket refuses the manifest after the
data went in) leaves nothing behind in any store: no empty version directory, no data object
without its manifest; the next publish takes the same version number."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from launchers.checkpoints import files
from launchers.checkpoints.azure import AzureBlobStore
from launchers.checkpoints.gcs import GcsStore
from launchers.checkpoints.local import LocalStore
from launchers.checkpoints.s3 import S3Store
from tests.launchers.checkpoints.conftest import Backend

FULL = OSError(errno.ENOSPC, "No space left on device")


def refuse_manifests(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's manifest write fails as a full disk or a refusing bucket would."""
    if isinstance(store, LocalStore):
        def write_atomic(path: Path, data: bytes, what: str = "") -> None:
            raise FULL

        monkeypatch.setattr(files, "write_atomic", write_atomic)
    elif isinstance(store, S3Store):
        put = store._put

        def s3_put(key: str, *args: Any, **kwargs: Any) -> bool:
            if key.endswith(".json"):
                raise FULL
            return put(key, *args, **kwargs)

        monkeypatch.setattr(store, "_put", s3_put)
    elif isinstance(store, AzureBlobStore):
        create_blob = store._create

        def azure_create(key: str, *args: Any) -> bool:
            if key.endswith(".json"):
                raise FULL
            return create_blob(key, *args)

        monkeypatch.setattr(store, "_create", azure_create)
    else:
        assert isinstance(store, GcsStore)
        create = store._create

        def gcs_create(blob: Any, *args: Any) -> bool:
            if blob.name.endswith(".json"):
                raise FULL
            return create(blob, *args)

        monkeypatch.setattr(store, "_create", gcs_create)


def test_a_failed_publish_leaves_nothing_behind(backend: Backend, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "job" / "checkpoint.npz"
    source.parent.mkdir()
    source.write_bytes(b"weights" * 100)
    with monkeypatch.context() as patch:
        refuse_manifests(backend.store, patch)
        for _ in range(2):
            with pytest.raises(OSError, match="No space left"):
                backend.store.publish(source)
    assert backend.listing() == set()
    if isinstance(backend.store, LocalStore):
        assert not [p for p in Path(backend.store.root).iterdir()]  # no empty directories
    assert backend.store.publish(source).version == 1
    assert backend.listing() == {"v00000001/checkpoint.npz", "v00000001.json"}
