"""The layout every checkpoint store shares, and its manifest format.

    <prefix>/v00000001/<name>    the data of each file new in the version, as the job wrote it
    <prefix>/v00000001.json      the manifest; its presence commits the version

A file's name is its path below the checkpoint directory, '/' between folders
("latest/state.json"), held at <prefix>/v00000001/latest/state.json. A name read from a
manifest is data from a store: one that is absolute, or has an empty, '.' or '..' part, is
refused (`check_name`), so that no file is ever fetched outside the directory.

A version of one file held in its own folder has the manifest {"version", "name", "size",
"sha256", "published_at"} (what every version had before versions were sets of files: such
stores read as they always did). A version of several files (or of files whose bytes an
earlier version's folder holds) adds "files": [{"name", "size", "sha256", "version"}, ...],
"version" being the version whose folder holds that file; its "name" is the first file's,
"size" the total and "sha256" `base.set_digest` of the files.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable
from datetime import datetime, timezone

from costsched.model import InvalidInput
from launchers.checkpoints.version import Checkpoint, set_digest

MANIFEST_RE = re.compile(r"^v(\d{8})\.json$")
VERSION_DIR_RE = re.compile(r"^v(\d{8})$")
MAX_VERSION = 99_999_999
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_BAD_NAME_CHARS = re.compile(r"[\\\x00-\x1f]")
MAX_NAME = 1024  # characters of a path; each folder or file name at most 255


def version_dir(version: int) -> str:
    """'v00000001' for version 1."""
    if not 1 <= version <= MAX_VERSION:
        raise InvalidInput(f"checkpoint version {version}: expected 1..{MAX_VERSION}")
    return f"v{version:08d}"


def manifest_name(version: int) -> str:
    return version_dir(version) + ".json"


def join(prefix: str, *parts: str) -> str:
    """An object key under `prefix` ('' for the bucket's root)."""
    return "/".join(p for p in (prefix.strip("/"), *parts) if p)


def check_name(name: str) -> str:
    """A checkpoint file's name: its path below the checkpoint directory, parts joined by
    '/' (never absolute, no empty, '.' or '..' part), so that it can never leave the
    directory it is fetched into."""
    parts = name.split("/") if isinstance(name, str) else [""]
    if (not name or len(name) > MAX_NAME or _BAD_NAME_CHARS.search(name)
            or any(p in ("", ".", "..") or len(p) > 255 for p in parts)):
        raise InvalidInput(f"checkpoint name {name!r}: expected a file's path below the "
                           "checkpoint directory ('/' between folders; not absolute; no "
                           "empty, '.' or '..' part; no '\\' or control characters; each "
                           "part at most 255 characters)")
    return name


def check_names(names: Iterable[str]) -> str:
    """'' when no name of a set is also a folder of another ('a' and 'a/b'), else which."""
    names = set(names)
    for name in sorted(names):
        parts = name.split("/")
        for end in range(1, len(parts)):
            if "/".join(parts[:end]) in names:
                return f"{'/'.join(parts[:end])} is both a file and a folder"
    return ""


def now() -> datetime:
    return datetime.now(timezone.utc)


def encode_manifest(checkpoint: Checkpoint) -> bytes:
    doc: dict = {"version": checkpoint.version, "name": checkpoint.name,
                 "size": checkpoint.size, "sha256": checkpoint.sha256,
                 "published_at": checkpoint.published_at.isoformat()}
    if checkpoint.files:
        doc["files"] = [{"name": p.name, "size": p.size, "sha256": p.sha256,
                         "version": p.version} for p in checkpoint.files]
    return json.dumps(doc, sort_keys=True).encode()


def decode_manifest(raw: bytes, version: int) -> Checkpoint:
    """The manifest stored as version `version`; ValueError naming what is wrong."""
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"manifest {manifest_name(version)}: not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"manifest {manifest_name(version)}: not a JSON object")
    where = f"manifest {manifest_name(version)}"
    if doc.get("version") != version:
        raise ValueError(f"{where}: version {doc.get('version')!r} does not match its name")
    name, size, sha = doc.get("name"), doc.get("size"), doc.get("sha256")
    _check_file(where, name, size, sha, entry=False)
    try:
        published = datetime.fromisoformat(doc.get("published_at"))
    except (TypeError, ValueError):
        raise ValueError(f"{where}: published_at {doc.get('published_at')!r} is not an "
                         "ISO 8601 time") from None
    if published.tzinfo is None:
        published = published.replace(tzinfo=timezone.utc)
    listed = doc.get("files")
    if listed is None:
        return Checkpoint(version=version, name=name, size=size, sha256=sha,
                          published_at=published)
    if not isinstance(listed, list) or not listed:
        raise ValueError(f"{where}: files {listed!r} is not a list of files")
    parts = tuple(_part(entry, version, published, where) for entry in listed)
    if len({p.name for p in parts}) != len(parts):
        raise ValueError(f"{where}: a file is named twice")
    clash = check_names(p.name for p in parts)
    if clash:
        raise ValueError(f"{where}: {clash}")
    if sum(p.size for p in parts) != size or set_digest(parts) != sha:
        raise ValueError(f"{where}: size or sha256 is not its files'")
    return Checkpoint(version=version, name=name, size=size, sha256=sha,
                      published_at=published, files=parts)


def _check_file(where: str, name: object, size: object, sha: object, entry: bool) -> None:
    """A manifest's name, size and SHA-256 checked: its own (a version of one file), or
    one entry of its "files" (`entry`: said as 'file NAME ...')."""
    if not isinstance(name, str):
        raise ValueError(f"{where}: {'file ' if entry else ''}name {name!r} is not a string")
    try:
        check_name(name)
    except InvalidInput as exc:
        raise ValueError(f"{where}: {exc}") from None
    of = f"file {name} " if entry else ""
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ValueError(f"{where}: {of}size {size!r} is not a non-negative integer")
    if not isinstance(sha, str) or not _SHA256_RE.match(sha):
        raise ValueError(f"{where}: {of}sha256 {sha!r} is not 64 lowercase hex digits")


def _part(entry: object, version: int, published: datetime, where: str) -> Checkpoint:
    """One entry of a manifest's "files", checked."""
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: file {entry!r} is not an object")
    name, size, sha, held = (entry.get(k) for k in ("name", "size", "sha256", "version"))
    _check_file(where, name, size, sha, entry=True)
    if not isinstance(held, int) or isinstance(held, bool) or not 1 <= held <= version:
        raise ValueError(f"{where}: file {name} version {held!r} is not 1..{version}")
    return Checkpoint(version=held, name=name, size=size, sha256=sha, published_at=published)


def read_manifests(uri: str, versions: Iterable[int],
                   read: Callable[[int], bytes | None]) -> list[Checkpoint]:
    """The committed versions, oldest first: each manifest `read` returns (None: deleted
    since the listing), decoded; a malformed one is left out with a warning."""
    found = []
    for version in sorted(versions):
        raw = read(version)
        if raw is None:
            continue
        try:
            found.append(decode_manifest(raw, version))
        except ValueError as exc:
            logging.getLogger("launchers.checkpoints").warning("%s: skipped: %s", uri, exc)
    return found
