"""A checkpoint store in S3 (boto3).

Each new file of a version is put with its SHA-256 (S3 rejects a body that does not match
it and keeps the checksum, so `verify` need not download), then the manifest. A version
copied in from another store (`copy_in`) is streamed as it is read, with the manifest's
SHA-256 as its checksum; its payload is not signed (it could not be without reading it
twice), so that checksum is what S3 checks it by. Every put is conditional
(`If-None-Match: *`): a version already taken by a concurrent publisher is never
overwritten, the loser moves on to the next number. Why that is safe on S3:
docs/reliability.md, "Checkpoints under concurrency".
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from costsched.clouds.aws import boto_config, new_session
from costsched.model import InvalidInput
from launchers.checkpoints import files, layout
from launchers.checkpoints.base import Checkpoint, CheckpointStore, CorruptCheckpoint, NewPart

log = logging.getLogger(__name__)

_TAKEN = ("PreconditionFailed", "ConditionalRequestConflict")
_MISSING = ("NoSuchKey", "404", "NotFound")


# One S3 client a process for each AWS environment (credentials, profile, region,
# endpoint...): a session costs a few tenths of a second of CPU to make (botocore's data
# and credential chain), and the agent and the daemon open a store for each publish, look
# and carry. Clients are safe to share between threads; credentials that expire are
# refreshed by the session that made them.
_SHARED: dict[str, Any] = {}
_SHARED_LOCK = threading.Lock()


def shared_client() -> Any:
    """The S3 client of this process for the AWS environment it has now (made at its first
    use). One made without credentials is not kept: a later store looks for them again."""
    key = _environment_key()
    with _SHARED_LOCK:
        found = _SHARED.get(key)
        if found is None:
            found = new_session().client("s3", config=boto_config())
            # The credentials the client was made with (None: none found); asked of the
            # session again, a missing set would be looked for a second time.
            signer = getattr(found, "_request_signer", None)
            if getattr(signer, "_credentials", None) is not None:
                _SHARED[key] = found
        return found


def _environment_key() -> str:
    """What picks the session's credentials, region and endpoints (the AWS_ variables, the
    home its files are under, the proxies), and this process (a forked child makes its own),
    as a digest: no secret is kept in clear."""
    picked = sorted((name, value) for name, value in os.environ.items()
                    if name.startswith("AWS_") or name.upper() in _ALSO_PICKED)
    text = repr((os.getpid(), picked))
    return hashlib.sha256(text.encode()).hexdigest()


_ALSO_PICKED = {"HOME", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "REQUESTS_CA_BUNDLE"}


class S3Store(CheckpointStore):
    def __init__(self, bucket: str, prefix: str = "", *, client: Any = None,
                 session: Any = None) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.uri = f"s3://{layout.join(bucket, self.prefix)}"
        if client is None:
            client = (session.client("s3", config=boto_config()) if session is not None
                      else shared_client())
        self.client = client

    def __repr__(self) -> str:
        return f"S3Store({self.uri!r})"

    # --- one file at a time (`CheckpointStore` makes versions of sets of them) --------

    def _put_part(self, version: int, part: NewPart, content: Any) -> bool:
        key = self._key(layout.version_dir(version), part.name)
        sha = bytes.fromhex(part.sha256)
        if isinstance(content, files.Stream):
            self.client.meta.events.register("before-sign.s3.PutObject", _unsigned_stream,
                                             unique_id="costsched-unsigned-stream")
            return self._put(key, content, sha, content.where, ContentLength=part.size,
                             ContentType="application/octet-stream")
        with Path(content).open("rb") as body:
            return self._put(key, body, sha, Path(content), ContentLength=part.size,
                             ContentType="application/octet-stream")

    def _put_manifest(self, version: int, raw: bytes) -> bool:
        """The manifest: True when it is ours (written, or found as we wrote it after a
        lost answer); False when another publisher holds the version."""
        key = self._key(layout.manifest_name(version))
        written = self._put(key, raw, hashlib.sha256(raw).digest(), key,
                            ContentType="application/json") or self._holds(key, raw)
        if written:
            log.info("published %s version %d", self.uri, version)
        return written

    def _drop_part(self, version: int, name: str) -> None:
        self.client.delete_object(Bucket=self.bucket,
                                  Key=self._key(layout.version_dir(version), name))

    def _drop_manifest(self, version: int) -> None:
        self.client.delete_object(Bucket=self.bucket,
                                  Key=self._key(layout.manifest_name(version)))

    def _folder(self, version: int) -> list[str]:
        folder = self._key(layout.version_dir(version)) + "/"
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=folder)
        return [item["Key"][len(folder):] for page in pages
                for item in page.get("Contents", [])]

    def check(self) -> None:
        """Fail now, in one line, when the bucket cannot be listed: no credentials, a refusal
        (denied, a bad key), no such bucket, S3 out of reach; never a traceback."""
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        try:
            self._scan()
        except NoCredentialsError:
            raise InvalidInput(f"checkpoint store {self.uri}: no AWS credentials found: run "
                               "`aws configure`, set AWS_PROFILE, or set AWS_ACCESS_KEY_ID and "
                               "AWS_SECRET_ACCESS_KEY (`costsched check` says more)") from None
        except ClientError as exc:
            raise InvalidInput(f"checkpoint store {self.uri}: S3 refused to list it "
                               f"({_code(exc) or 'no reason given'})") from None
        except BotoCoreError as exc:
            raise InvalidInput(f"checkpoint store {self.uri}: S3 cannot be reached "
                               f"({type(exc).__name__})") from None

    def chunks(self, checkpoint: Checkpoint) -> Iterator[bytes]:
        try:
            body = self._body(checkpoint)
        except self.client.exceptions.NoSuchKey:
            raise CorruptCheckpoint(f"checkpoint {self.uri} version {checkpoint.version} "
                                    f"({checkpoint.name}): data missing") from None
        yield from body.iter_chunks(files.CHUNK)

    def list(self) -> list[Checkpoint]:
        def read(version: int) -> bytes | None:
            key = self._key(layout.manifest_name(version))
            try:
                return self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
            except self.client.exceptions.NoSuchKey:  # deleted since the listing
                return None

        manifests, _ = self._scan()
        return layout.read_manifests(self.uri, manifests, read)

    def verify_part(self, checkpoint: Checkpoint) -> bool:
        key = self._data_key(checkpoint)
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
        except self.client.exceptions.ClientError as exc:
            if _code(exc) in _MISSING:
                return False
            raise
        if head.get("ContentLength") != checkpoint.size:
            return False
        stored = head.get("ChecksumSHA256")
        if stored and "-" not in stored:  # a whole-object checksum S3 checked on upload
            return stored == _b64(bytes.fromhex(checkpoint.sha256))
        sha = hashlib.sha256()
        size = 0
        for chunk in self._body(checkpoint).iter_chunks(files.CHUNK):
            sha.update(chunk)
            size += len(chunk)
        return not files.check(checkpoint, size, sha.hexdigest())

    def fetch_part(self, checkpoint: Checkpoint, dest_dir: Path) -> Path:
        where = f"checkpoint {self.uri} version {checkpoint.version} ({checkpoint.name})"
        with files.partial(Path(dest_dir), checkpoint.name) as part:
            try:
                body = self._body(checkpoint)
            except self.client.exceptions.NoSuchKey:
                raise CorruptCheckpoint(f"{where}: data missing") from None
            for chunk in body.iter_chunks(files.CHUNK):
                part.write(chunk)
            return part.commit(checkpoint, where)

    # --- internals -------------------------------------------------------------------

    def _key(self, *parts: str) -> str:
        return layout.join(self.prefix, *parts)

    def _data_key(self, checkpoint: Checkpoint) -> str:
        return self._key(layout.version_dir(checkpoint.version), checkpoint.name)

    def _body(self, checkpoint: Checkpoint) -> Any:
        return self.client.get_object(Bucket=self.bucket, Key=self._data_key(checkpoint))["Body"]

    def _put(self, key: str, body: Any, sha256: bytes, src: Path | str, **extra: Any) -> bool:
        """Put `key` unless it exists: True when put, False when already taken. `src`: the
        file published, or (a str) the copy of another store's version."""
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=body, IfNoneMatch="*",
                                   ChecksumAlgorithm="SHA256", ChecksumSHA256=_b64(sha256),
                                   **extra)
        except self.client.exceptions.ClientError as exc:
            code = _code(exc)
            if code in _TAKEN:
                return False
            if code == "NoSuchBucket":
                raise InvalidInput(f"checkpoint store {self.uri}: bucket {self.bucket} does "
                                   "not exist") from None
            if code in ("BadDigest", "InvalidDigest") and isinstance(src, str):
                raise CorruptCheckpoint(f"{src}: S3 found another SHA-256 than the "
                                        "manifest's") from None
            if code in ("BadDigest", "InvalidDigest"):
                raise InvalidInput(f"checkpoint file {src}: changed while it was "
                                   "published") from None
            raise
        return True

    def _holds(self, key: str, data: bytes) -> bool:
        """Whether `key` holds exactly `data`. A put refused as taken may have been taken by
        itself: its first attempt landed and its answer was lost, and the client's retry
        was refused. A manifest names its publisher's claimed data and the time to the
        microsecond, so no other publisher's is the same bytes."""
        try:
            return bool(self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
                        == data)
        except self.client.exceptions.NoSuchKey:
            return False

    def _scan(self) -> tuple[set[int], set[int]]:
        """(versions with a manifest, versions with a data folder) under the prefix."""
        manifests: set[int] = set()
        folders: set[int] = set()
        top = self._key() + "/" if self.prefix else ""
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=top, Delimiter="/")
            for page in pages:
                for item in page.get("Contents", []):
                    match = layout.MANIFEST_RE.match(item["Key"][len(top):])
                    if match:
                        manifests.add(int(match.group(1)))
                for common in page.get("CommonPrefixes", []):
                    match = layout.VERSION_DIR_RE.match(common["Prefix"][len(top):-1])
                    if match:
                        folders.add(int(match.group(1)))
        except self.client.exceptions.NoSuchBucket:
            raise InvalidInput(f"checkpoint store {self.uri}: bucket {self.bucket} does not "
                               "exist") from None
        return manifests, folders

    def _next_version(self) -> int:
        manifests, folders = self._scan()
        return max(manifests | folders, default=0) + 1


def _unsigned_stream(request: Any, **_: Any) -> None:
    """botocore's before-sign hook: a body streamed from another store (`files.Stream`) is
    sent with an unsigned payload (signing it would read it whole first); S3 checks it
    against the SHA-256 checksum sent with it."""
    if isinstance(request.body, files.Stream):
        from botocore.config import Config

        config = request.context.get("client_config") or Config()
        request.context["client_config"] = config.merge(
            Config(s3={"payload_signing_enabled": False}))


def _b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode()


def _code(exc: Exception) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
