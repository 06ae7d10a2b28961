"""A checkpoint store in Google Cloud Storage (google-cloud-storage).

The data blob is uploaded with an MD5 checked by the client against the server's, and
compared with the MD5 of the bytes whose SHA-256 the manifest records; then the manifest
blob. Both uploads carry `ifGenerationMatch=0` (create only): a version already taken by a
concurrent publisher is never overwritten, the loser moves on to the next number. A version
copied in from another store (`copy_in`) is streamed in resumable chunks of CHUNK_BYTES
(multipart when smaller), hashed on the way, and deleted unless it is its manifest's. The
SDK is imported only here, when a store is made.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from costsched.clouds.base import SdkMissing
from costsched.model import InvalidInput
from launchers.checkpoints import files, layout
from launchers.checkpoints.base import Checkpoint, CheckpointStore, CorruptCheckpoint

log = logging.getLogger(__name__)

MAX_CLAIMS = 100  # versions tried before giving up on a contended prefix
CHUNK_BYTES = 8 << 20  # streamed reads and resumable uploads (a multiple of 256 KiB)


def _sdk() -> tuple[Any, Any]:
    """(google.cloud.storage, google.api_core.exceptions); SdkMissing without them."""
    try:
        import google.cloud.storage as storage
        from google.api_core import exceptions
    except ImportError:
        raise SdkMissing("gcs: google-cloud-storage is not installed: "
                         "pip install 'costsched[gcp]'") from None
    return storage, exceptions


class GcsStore(CheckpointStore):
    def __init__(self, bucket: str, prefix: str = "", *, client: Any = None,
                 project: str | None = None) -> None:
        storage, self._errors = _sdk()
        self.prefix = prefix.strip("/")
        self.uri = f"gs://{layout.join(bucket, self.prefix)}"
        if client is None:
            from google.auth.exceptions import DefaultCredentialsError

            try:
                client = storage.Client(project=project)
            except DefaultCredentialsError:
                raise InvalidInput(f"checkpoint store {self.uri}: no Google Cloud credentials "
                                   "found (application default credentials)") from None
        self.client = client
        self.bucket = self.client.bucket(bucket)

    def __repr__(self) -> str:
        return f"GcsStore({self.uri!r})"

    def publish(self, local: Path, name: str | None = None) -> Checkpoint:
        src = files.source(local)
        name = layout.check_name(name if name is not None else src.name)
        size, hashes = files.digests(src, "md5")
        version = self._next_version()
        for _ in range(MAX_CLAIMS):
            checkpoint = Checkpoint(version=version, name=name, size=size,
                                    sha256=hashes["sha256"].hex(), published_at=layout.now())
            data = self.bucket.blob(self._key(layout.version_dir(version), name))
            if self._create(data, src, "application/octet-stream"):
                if data.md5_hash != _b64(hashes["md5"]):
                    data.delete(if_generation_match=data.generation)
                    raise InvalidInput(f"checkpoint file {src}: changed while it was published")
                manifest = self.bucket.blob(self._key(layout.manifest_name(version)))
                try:
                    written = self._create(manifest, layout.encode_manifest(checkpoint),
                                           "application/json")
                except BaseException:
                    # No data object without its manifest is left behind by a failure.
                    with contextlib.suppress(Exception):
                        data.delete(if_generation_match=data.generation)
                    raise
                if written:
                    log.info("published %s version %d (%s, %d bytes)", self.uri, version,
                             name, size)
                    return checkpoint
                data.delete(if_generation_match=data.generation)
            version = max(version + 1, self._next_version())
        raise RuntimeError(f"checkpoint store {self.uri}: no free version after {MAX_CLAIMS} "
                           "tries (too many concurrent publishers)")

    def copy_in(self, source: CheckpointStore, checkpoint: Checkpoint) -> Checkpoint:
        name = layout.check_name(checkpoint.name)
        where = f"copy of {source.uri} version {checkpoint.version}"
        version = self._next_version()
        for _ in range(MAX_CLAIMS):
            copy = replace(checkpoint, version=version)
            data = self.bucket.blob(self._key(layout.version_dir(version), name),
                                    chunk_size=CHUNK_BYTES)
            stream = files.Stream(source.chunks(checkpoint), checkpoint, where)
            if self._create(data, stream, "application/octet-stream", checkpoint.size):
                try:
                    stream.check()
                    written = self._create(
                        self.bucket.blob(self._key(layout.manifest_name(version))),
                        layout.encode_manifest(copy), "application/json")
                except BaseException:
                    with contextlib.suppress(Exception):  # no data without its manifest
                        data.delete(if_generation_match=data.generation)
                    raise
                if written:
                    log.info("copied %s version %d in as %s version %d", source.uri,
                             checkpoint.version, self.uri, version)
                    return copy
                data.delete(if_generation_match=data.generation)
            version = max(version + 1, self._next_version())
        raise RuntimeError(f"checkpoint store {self.uri}: no free version after {MAX_CLAIMS} "
                           "tries (too many concurrent publishers)")

    def chunks(self, checkpoint: Checkpoint) -> Iterator[bytes]:
        try:
            with self.bucket.blob(self._data_key(checkpoint)).open(
                    "rb", chunk_size=CHUNK_BYTES) as reader:
                while chunk := reader.read(CHUNK_BYTES):
                    yield chunk
        except self._errors.NotFound:
            raise CorruptCheckpoint(f"checkpoint {self.uri} version {checkpoint.version} "
                                    f"({checkpoint.name}): data missing") from None

    def list(self) -> list[Checkpoint]:
        def read(version: int) -> bytes | None:
            blob = self.bucket.blob(self._key(layout.manifest_name(version)))
            try:
                return blob.download_as_bytes()
            except self._errors.NotFound:  # deleted since the listing
                return None

        manifests, _ = self._scan()
        return layout.read_manifests(self.uri, manifests, read)

    def verify(self, checkpoint: Checkpoint) -> bool:
        blob = self.bucket.get_blob(self._data_key(checkpoint))
        if blob is None or blob.size != checkpoint.size:
            return False
        sink = _HashSink()
        try:
            blob.download_to_file(sink)
        except self._errors.NotFound:
            return False
        return not files.check(checkpoint, sink.size, sink.sha.hexdigest())

    def fetch(self, checkpoint: Checkpoint, dest_dir: Path) -> Path:
        where = f"checkpoint {self.uri} version {checkpoint.version} ({checkpoint.name})"
        with files.partial(Path(dest_dir), checkpoint.name) as part:
            try:
                # into the partial file (hashed on the way), renamed only once it matches
                self.bucket.blob(self._data_key(checkpoint)).download_to_file(part)
            except self._errors.NotFound:
                raise CorruptCheckpoint(f"{where}: data missing") from None
            return part.commit(checkpoint, where)

    def delete(self, checkpoint: Checkpoint) -> None:
        with contextlib.suppress(self._errors.NotFound):
            self.bucket.blob(self._key(layout.manifest_name(checkpoint.version))).delete()
        folder = self._key(layout.version_dir(checkpoint.version)) + "/"
        for blob in self.client.list_blobs(self.bucket, prefix=folder):
            with contextlib.suppress(self._errors.NotFound):
                blob.delete()

    # --- internals -------------------------------------------------------------------

    def _key(self, *parts: str) -> str:
        return layout.join(self.prefix, *parts)

    def _data_key(self, checkpoint: Checkpoint) -> str:
        return self._key(layout.version_dir(checkpoint.version), checkpoint.name)

    def _create(self, blob: Any, content: Path | bytes | files.Stream, content_type: str,
                size: int | None = None) -> bool:
        """Upload `blob` unless it exists: True when created, False when already taken."""
        try:
            if isinstance(content, files.Stream):
                blob.upload_from_file(content, size=size, content_type=content_type,
                                      if_generation_match=0, checksum="md5")
            elif isinstance(content, Path):
                blob.upload_from_filename(str(content), content_type=content_type,
                                          if_generation_match=0, checksum="md5")
            else:
                blob.upload_from_string(content, content_type=content_type,
                                        if_generation_match=0, checksum="md5")
        except self._errors.PreconditionFailed:
            return False
        except self._errors.NotFound:
            raise InvalidInput(f"checkpoint store {self.uri}: bucket {self.bucket.name} does "
                               "not exist") from None
        return True

    def _scan(self) -> tuple[set[int], set[int]]:
        """(versions with a manifest, versions with a data folder) under the prefix."""
        top = self._key() + "/" if self.prefix else ""
        manifests: set[int] = set()
        folders: set[int] = set()
        try:
            listing = self.client.list_blobs(self.bucket, prefix=top, delimiter="/")
            for page in listing.pages:
                for blob in page:
                    match = layout.MANIFEST_RE.match(blob.name[len(top):])
                    if match:
                        manifests.add(int(match.group(1)))
                for folder in page.prefixes:
                    match = layout.VERSION_DIR_RE.match(folder[len(top):-1])
                    if match:
                        folders.add(int(match.group(1)))
        except self._errors.NotFound:
            raise InvalidInput(f"checkpoint store {self.uri}: bucket {self.bucket.name} does "
                               "not exist") from None
        return manifests, folders

    def _next_version(self) -> int:
        manifests, folders = self._scan()
        return max(manifests | folders, default=0) + 1


class _HashSink:
    """A write-only file object that keeps only the size and SHA-256 of what it gets."""

    def __init__(self) -> None:
        self.sha = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes) -> int:
        self.sha.update(chunk)
        self.size += len(chunk)
        return len(chunk)


def _b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode()
