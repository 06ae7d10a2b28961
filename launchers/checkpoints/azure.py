"""A checkpoint store in Azure Blob Storage (azure-storage-blob), authorised by
azure-identity's DefaultAzureCredential: an Azure CLI login here, the VM's managed identity
on Azure. No key or shared access signature is used or carried: a location with a query
string is refused.

Locations:
- az://CONTAINER[/PREFIX]: in the storage account $AZURE_STORAGE_ACCOUNT names, else
  config azure.storage_account;
- https://ACCOUNT.blob.core.windows.net/CONTAINER[/PREFIX]: the account's own URL (what an
  instance is given: `instance_uri`).
$AZURE_STORAGE_SERVICE_ENDPOINT (the Azure CLI's variable) replaces the account's endpoint
https://ACCOUNT.blob.core.windows.net, for an emulator's (Azurite's, path-style).

Both uploads of a version are create-only (If-None-Match: *): a version already taken by a
concurrent publisher is never overwritten, the loser moves on to the next number. The data
is hashed as it is sent: a file that changed while it was published (or a version copied
in from another store, `copy_in`, that is not its manifest's) is deleted and refused. Data
over BLOCK_BYTES goes up in blocks of that size, one at a time, and comes down in chunks no
larger: that much in memory at most.
The SDK is imported only here, when a store is made.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from costsched.clouds.azure import AZURE
from costsched.clouds.base import SdkMissing
from costsched.model import InvalidInput
from launchers.checkpoints import files, layout
from launchers.checkpoints.base import Checkpoint, CheckpointStore, CorruptCheckpoint, NewPart

log = logging.getLogger(__name__)

BLOCK_BYTES = 8 << 20  # a blob over this is uploaded in blocks of this size (the SDK's: 64 MiB)
ENV_ACCOUNT = "AZURE_STORAGE_ACCOUNT"
ENV_ENDPOINT = "AZURE_STORAGE_SERVICE_ENDPOINT"
# Blob endpoints of Azure's clouds: public, US Government, China.
HOST_SUFFIXES = AZURE.storage_hosts
ACCEPTED = "az://CONTAINER[/PREFIX] or https://ACCOUNT.blob.core.windows.net/CONTAINER[/PREFIX]"
_ACCOUNT = re.compile(r"^[a-z0-9]{3,24}$")
_CONTAINER = re.compile(r"^(?=.{3,63}$)[a-z0-9]+(-[a-z0-9]+)*$")


def is_blob_url(uri: str) -> bool:
    """Whether `uri` is an Azure Blob account URL (https://ACCOUNT.blob.core.windows.net/...)."""
    host = (urlsplit(uri).hostname or "").lower()
    return uri.lower().startswith("https://") and host.endswith(HOST_SUFFIXES)


def parse(uri: str, what: str = "checkpoint location") -> tuple[str, str, str, str]:
    """(account, endpoint suffix, container, prefix) of a Blob location; InvalidInput naming
    what is wrong (`what`: what the location is for)."""
    parts = urlsplit(uri)
    bad = f"{what} {uri!r}: expected {ACCEPTED}"
    if parts.query or parts.fragment or parts.username or parts.password:
        raise InvalidInput(f"{bad} (no query string: credentials never travel in a location)")
    if parts.scheme == "az":
        container, prefix = parts.netloc, parts.path
        account, suffix = _configured_account(uri, what), HOST_SUFFIXES[0]
    elif is_blob_url(uri):
        host = (parts.hostname or "").lower()
        account, suffix = host.split(".", 1)[0], host[len(host.split(".", 1)[0]):]
        container, _, prefix = parts.path.lstrip("/").partition("/")
    else:
        raise InvalidInput(bad)
    prefix = prefix.strip("/")
    if "//" in prefix or {".", ".."} & set(prefix.split("/")):
        raise InvalidInput(bad)
    if not _ACCOUNT.match(account):
        raise InvalidInput(f"{bad} (a storage account of 3-24 lowercase letters and digits)")
    if not _CONTAINER.match(container):
        raise InvalidInput(f"{bad} (a container of 3-63 lowercase letters, digits and "
                           "single dashes)")
    return account, suffix, container, prefix


def _configured_account(uri: str, what: str) -> str:
    account = os.environ.get(ENV_ACCOUNT, "").strip()
    if not account:
        from costsched.config import effective

        account = effective().azure.storage_account or ""
    if not account:
        raise InvalidInput(f"{what} {uri!r}: no storage account: set "
                           f"azure.storage_account in the config or {ENV_ACCOUNT}, or give "
                           "the account's URL (https://ACCOUNT.blob.core.windows.net/...)")
    return account


def endpoint(account: str, suffix: str) -> str:
    """The Blob endpoint of `account`: $AZURE_STORAGE_SERVICE_ENDPOINT (an emulator's),
    else https://ACCOUNT.blob.core.windows.net (or its cloud's suffix)."""
    return os.environ.get(ENV_ENDPOINT, "").strip().rstrip("/") or f"https://{account}{suffix}"


def instance_uri(uri: str, what: str = "checkpoint location") -> str:
    """`uri` as an instance (or SkyPilot) is given it: the account's URL, which needs no
    configuration; `what`: what the location is for, said if it names no account."""
    if not uri.startswith("az://"):
        return uri
    account, suffix, container, prefix = parse(uri, what)
    return f"https://{account}{suffix}/{layout.join(container, prefix)}"


def _sdk() -> tuple[Any, Any]:
    """(azure.storage.blob, azure.core.exceptions); SdkMissing without them."""
    try:
        import azure.storage.blob as blob
        from azure.core import exceptions
    except ImportError:
        raise SdkMissing("azure blob: azure-storage-blob is not installed: "
                         "pip install 'costsched[azure]'") from None
    return blob, exceptions


class AzureBlobStore(CheckpointStore):
    def __init__(self, uri: str, *, credential: Any = None, what: str = "checkpoint location",
                 **client_options: Any) -> None:
        """`what`: what the location is for, said in its errors."""
        blob, self._errors = _sdk()
        account, suffix, container, prefix = parse(uri, what)
        self.what = what
        self.prefix = prefix
        self.uri = uri.rstrip("/")
        if credential is None:
            from costsched.clouds.azure_sdk import default_credential

            credential = default_credential()
        client_options.setdefault("max_single_put_size", BLOCK_BYTES)
        client_options.setdefault("max_block_size", BLOCK_BYTES)
        client_options.setdefault("max_single_get_size", BLOCK_BYTES)
        self.container = blob.ContainerClient(endpoint(account, suffix),
                                              container, credential=credential,
                                              **client_options)

    def __repr__(self) -> str:
        return f"AzureBlobStore({self.uri!r})"

    # --- the store ---------------------------------------------------------------------

    # --- one file at a time (`CheckpointStore` makes versions of sets of them) --------

    def _put_part(self, version: int, part: NewPart, content: Any) -> bool:
        key = self._key(layout.version_dir(version), part.name)
        if isinstance(content, files.Stream):
            return self._create(key, content, part.size)
        with Path(content).open("rb") as handle:
            sent = _Hashing(handle)
            if not self._create(key, sent, part.size):
                return False
        if sent.sha.hexdigest() != part.sha256 or sent.size != part.size:
            self._delete(key)
            raise InvalidInput(f"checkpoint file {content}: changed while it was published")
        return True

    def _put_manifest(self, version: int, raw: bytes) -> bool:
        written = self._create(self._key(layout.manifest_name(version)), raw)
        if written:
            log.info("published %s version %d", self.uri, version)
        return written

    def _drop_part(self, version: int, name: str) -> None:
        self._delete(self._key(layout.version_dir(version), name))

    def _drop_manifest(self, version: int) -> None:
        self._delete(self._key(layout.manifest_name(version)))

    def _folder(self, version: int) -> list[str]:
        folder = self._key(layout.version_dir(version)) + "/"
        return [item.name[len(folder):]
                for item in self.container.list_blobs(name_starts_with=folder)]

    def chunks(self, checkpoint: Checkpoint) -> Iterator[bytes]:
        try:
            yield from self._download(self._data_key(checkpoint))
        except self._errors.ResourceNotFoundError:
            raise CorruptCheckpoint(f"checkpoint {self.uri} version {checkpoint.version} "
                                    f"({checkpoint.name}): data missing") from None

    def list(self) -> list[Checkpoint]:
        manifests, _ = self._scan()
        return layout.read_manifests(self.uri, manifests, lambda version: self.get_bytes(
            layout.manifest_name(version)))

    def verify_part(self, checkpoint: Checkpoint) -> bool:
        sha, size = hashlib.sha256(), 0
        try:
            for chunk in self._download(self._data_key(checkpoint)):
                sha.update(chunk)
                size += len(chunk)
        except self._errors.ResourceNotFoundError:
            return False
        return not files.check(checkpoint, size, sha.hexdigest())

    def fetch_part(self, checkpoint: Checkpoint, dest_dir: Path) -> Path:
        where = f"checkpoint {self.uri} version {checkpoint.version} ({checkpoint.name})"
        with files.partial(Path(dest_dir), checkpoint.name) as part:
            try:  # into the partial file (hashed on the way), renamed only once it matches
                for chunk in self._download(self._data_key(checkpoint)):
                    part.write(chunk)
            except self._errors.ResourceNotFoundError:
                raise CorruptCheckpoint(f"{where}: data missing") from None
            return part.commit(checkpoint, where)

    def check(self) -> None:
        try:
            self.container.get_container_properties()
        except self._errors.ResourceNotFoundError:
            raise InvalidInput(self._missing()) from None
        except self._errors.HttpResponseError as exc:
            raise InvalidInput(f"checkpoint store {self.uri}: {_reason(exc)}") from None

    # --- small objects beside the checkpoints (code archives, heartbeats, gangs) -----------

    def put_bytes(self, name: str, data: bytes | BinaryIO, content_type: str) -> None:
        """Write `name` under the prefix, replacing what was there."""
        blob, _ = _sdk()
        self.container.upload_blob(self._key(name), data, overwrite=True,
                                   content_settings=blob.ContentSettings(
                                       content_type=content_type))

    def get_bytes(self, name: str) -> bytes | None:
        """`name` under the prefix; None when there is none."""
        try:
            return b"".join(self._download(self._key(name)))
        except self._errors.ResourceNotFoundError:
            return None

    def download(self, name: str) -> Iterator[bytes]:
        """`name` under the prefix, chunk by chunk (ResourceNotFoundError: none)."""
        return self._download(self._key(name))

    def names(self) -> Iterator[str]:
        """Every blob under the prefix, by its name below it (a bucket mount's files)."""
        top = self._key() + "/" if self.prefix else ""
        try:
            for item in self.container.list_blobs(name_starts_with=top or None):
                yield item.name[len(top):]
        except self._errors.ResourceNotFoundError:
            raise InvalidInput(self._missing()) from None

    # --- internals -----------------------------------------------------------------------

    def _key(self, *parts: str) -> str:
        return layout.join(self.prefix, *parts)

    def _data_key(self, checkpoint: Checkpoint) -> str:
        return self._key(layout.version_dir(checkpoint.version), checkpoint.name)

    def _missing(self) -> str:
        where = "checkpoint store" if self.what == "checkpoint location" else self.what
        return f"{where} {self.uri}: container {self.container.container_name} does not exist"

    def _download(self, key: str) -> Iterator[bytes]:
        return self.container.download_blob(key).chunks()

    def _create(self, key: str, content: Any, size: int | None = None) -> bool:
        """Upload `key` unless it exists: True when created, False when already taken."""
        blob, _ = _sdk()
        kind = "application/json" if isinstance(content, bytes) else "application/octet-stream"
        try:
            self.container.upload_blob(key, content, length=size, overwrite=False,
                                       content_settings=blob.ContentSettings(content_type=kind))
        except self._errors.ResourceExistsError:
            return False
        except self._errors.ResourceNotFoundError:
            raise InvalidInput(self._missing()) from None
        return True

    def _delete(self, key: str) -> None:
        with contextlib.suppress(self._errors.ResourceNotFoundError):
            self.container.delete_blob(key)

    def _scan(self) -> tuple[set[int], set[int]]:
        """(versions with a manifest, versions with a data folder) under the prefix."""
        top = self._key() + "/" if self.prefix else ""
        manifests: set[int] = set()
        folders: set[int] = set()
        try:
            for item in self.container.walk_blobs(name_starts_with=top or None, delimiter="/"):
                rest = item.name[len(top):]
                if rest.endswith("/"):
                    match = layout.VERSION_DIR_RE.match(rest[:-1])
                    if match:
                        folders.add(int(match.group(1)))
                    continue
                match = layout.MANIFEST_RE.match(rest)
                if match:
                    manifests.add(int(match.group(1)))
        except self._errors.ResourceNotFoundError:
            raise InvalidInput(self._missing()) from None
        return manifests, folders

    def _next_version(self) -> int:
        manifests, folders = self._scan()
        return max(manifests | folders, default=0) + 1


class _Hashing:
    """A file read once, forward only, its bytes hashed as the SDK sends them."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle, self.sha, self.size = handle, hashlib.sha256(), 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.handle.read(size)
        self.sha.update(chunk)
        self.size += len(chunk)
        return chunk


def _reason(exc: Exception) -> str:
    code = getattr(exc, "error_code", None) or getattr(exc, "status_code", "")
    message = " ".join(str(getattr(exc, "reason", "") or "").split())
    return f"{code}: {message}".strip(": ") or type(exc).__name__
