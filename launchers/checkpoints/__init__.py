"""Checkpoint stores: a local directory, S3, GCS or Azure Blob behind one interface (`base`).

`open_store(uri)` picks the store from the URI: "s3://bucket/prefix", "gs://bucket/prefix",
"az://container/prefix" (or a Blob account's https:// URL), "file:///path" or a plain path.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from costsched.clouds import BUCKET
from costsched.model import InvalidInput
from launchers.checkpoints.base import Checkpoint, CheckpointStore, CorruptCheckpoint

ACCEPTED = ("s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], "
            "https://ACCOUNT.blob.core.windows.net/CONTAINER[/PREFIX], file:///PATH or a path")
# "x:" of two letters or more (so "C:\\..." is a path); "name:rest" without "//" is a path too
# unless the name is one of ours (a typo such as "s3:/bucket" must not become a directory).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(//)?")


def open_store(uri: str, **options: Any) -> CheckpointStore:
    """The store a URI names; `options` go to its constructor (e.g. a `client`)."""
    if not isinstance(uri, str) or not uri.strip():
        raise InvalidInput(f"checkpoint location {uri!r}: expected {ACCEPTED}")
    scheme = _SCHEME.match(uri)
    name = scheme.group(1).lower() if scheme else ""
    if scheme is None or (scheme.group(2) is None and name not in ("s3", "gs", "az", "file")):
        return _local(Path(uri), **options)
    parts = urlsplit(uri)
    if (name == "az" and scheme.group(2)) or (name == "https" and _blob_url(uri)):
        from launchers.checkpoints.azure import AzureBlobStore

        return AzureBlobStore(uri, **options)
    if name in ("s3", "gs") and scheme.group(2):
        bucket, prefix = parts.netloc, parts.path.strip("/")
        bad_prefix = "//" in prefix or {".", ".."} & set(prefix.split("/"))
        if not BUCKET.fullmatch(bucket) or bad_prefix or parts.query or parts.fragment:
            raise InvalidInput(f"checkpoint location {uri!r}: expected {ACCEPTED} "
                               "(a bucket of 3-222 lowercase letters, digits, '.', '-', '_')")
        if name == "s3":
            from launchers.checkpoints.s3 import S3Store

            return S3Store(bucket, prefix, **options)
        from launchers.checkpoints.gcs import GcsStore

        return GcsStore(bucket, prefix, **options)
    if name == "file" and uri.startswith("file://") and parts.netloc in ("", "localhost") \
            and parts.path.startswith("/"):
        return _local(Path(unquote(parts.path)), **options)
    raise InvalidInput(f"checkpoint location {uri!r}: expected {ACCEPTED}")


def _blob_url(uri: str) -> bool:
    from launchers.checkpoints.azure import is_blob_url

    return is_blob_url(uri)


def _local(path: Path, **options: Any) -> CheckpointStore:
    from launchers.checkpoints.local import LocalStore

    return LocalStore(path, **options)


__all__ = ["ACCEPTED", "Checkpoint", "CheckpointStore", "CorruptCheckpoint", "open_store"]
