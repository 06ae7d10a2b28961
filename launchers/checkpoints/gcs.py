"""A checkpoint store in Google Cloud Storage (google-cloud-storage).

Each new file of a version is uploaded with an MD5 checked by the client against the server's, and
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
from pathlib import Path
from typing import Any

from costsched.clouds.base import SdkMissing
from costsched.model import InvalidInput
from launchers.checkpoints import files, layout
from launchers.checkpoints.base import Checkpoint, CheckpointStore, CorruptCheckpoint, NewPart

log = logging.getLogger(__name__)

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

    # --- one file at a time (`CheckpointStore` makes versions of sets of them) --------

    def _put_part(self, version: int, part: NewPart, content: Any) -> bool:
        key = self._key(layout.version_dir(version), part.name)
        if isinstance(content, files.Stream):
            blob = self.bucket.blob(key, chunk_size=CHUNK_BYTES)
            return self._create(blob, content, "application/octet-stream", part.size)
        blob = self.bucket.blob(key)
        if not self._create(blob, Path(content), "application/octet-stream"):
            return False
        if part.md5 is not None and blob.md5_hash != _b64(part.md5):
            blob.delete(if_generation_match=blob.generation)
            raise InvalidInput(f"checkpoint file {content}: changed while it was published")
        return True

    def _put_manifest(self, version: int, raw: bytes) -> bool:
        written = self._create(self.bucket.blob(self._key(layout.manifest_name(version))),
                               raw, "application/json")
        if written:
            log.info("published %s version %d", self.uri, version)
        return written

    def _drop_part(self, version: int, name: str) -> None:
        with contextlib.suppress(self._errors.NotFound):
            self.bucket.blob(self._key(layout.version_dir(version), name)).delete()

    def _drop_manifest(self, version: int) -> None:
        with contextlib.suppress(self._errors.NotFound):
            self.bucket.blob(self._key(layout.manifest_name(version))).delete()

    def _folder(self, version: int) -> list[str]:
        folder = self._key(layout.version_dir(version)) + "/"
        return [blob.name[len(folder):]
                for blob in self.client.list_blobs(self.bucket, prefix=folder)]

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

    def verify_part(self, checkpoint: Checkpoint) -> bool:
        blob = self.bucket.get_blob(self._data_key(checkpoint))
        if blob is None or blob.size != checkpoint.size:
            return False
        sink = _HashSink()
        try:
            blob.download_to_file(sink)
        except self._errors.NotFound:
            return False
        return not files.check(checkpoint, sink.size, sink.sha.hexdigest())

    def fetch_part(self, checkpoint: Checkpoint, dest_dir: Path) -> Path:
        where = f"checkpoint {self.uri} version {checkpoint.version} ({checkpoint.name})"
        with files.partial(Path(dest_dir), checkpoint.name) as part:
            try:
                # into the partial file (hashed on the way), renamed only once it matches
                self.bucket.blob(self._data_key(checkpoint)).download_to_file(part)
            except self._errors.NotFound:
                raise CorruptCheckpoint(f"{where}: data missing") from None
            return part.commit(checkpoint, where)

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
