"""A checkpoint version as a value: the `Checkpoint` a store lists (one file, or the
complete set of files of a version, each at the version that holds its bytes), the digest
that names a set, and the file a version uploads (`NewPart`). No store and no I/O: the
stores (`base.CheckpointStore`), the manifests (`layout`) and the streams (`files`) build
on it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Checkpoint:
    """A version. `files`: its files, each a Checkpoint of one file whose `version` is the
    version holding its bytes; empty for a version of one file held in its own folder
    (then `name`, `size` and `sha256` are that file's). For a version of several files,
    `name` is the first file's, `size` their total and `sha256` a digest of the list of
    (name, size, SHA-256): two versions of the same files have the same one."""

    version: int  # 1, 2, ... in publication order
    name: str  # the file name the job wrote (the first one of a set)
    size: int
    sha256: str
    published_at: datetime
    files: tuple[Checkpoint, ...] = ()

    @property
    def parts(self) -> tuple[Checkpoint, ...]:
        """Its files, each as a Checkpoint of one file at the version holding its bytes."""
        return self.files or (self,)

    def part(self, name: str) -> Checkpoint | None:
        """Its file `name` (to fetch that file alone), None when it has none by that name."""
        return next((p for p in self.parts if p.name == name), None)

    def describe(self) -> str:
        """Its files' names: 'lm.npz' or '2 files: blob.bin, lm.npz'."""
        names = [p.name for p in self.parts]
        return names[0] if len(names) == 1 else f"{len(names)} files: {', '.join(names)}"


def set_digest(parts: Sequence[Checkpoint]) -> str:
    """The SHA-256 naming a set of files by their names, sizes and contents."""
    if len(parts) == 1:
        return parts[0].sha256
    lines = "".join(f"{p.name}\t{p.size}\t{p.sha256}\n" for p in sorted(parts, key=_by_name))
    return hashlib.sha256(lines.encode()).hexdigest()


def make_checkpoint(version: int, parts: Sequence[Checkpoint],
                    published_at: datetime) -> Checkpoint:
    """Version `version` of `parts` (each at the version holding its bytes)."""
    parts = sorted(parts, key=_by_name)
    if len(parts) == 1 and parts[0].version == version:
        return replace(parts[0], published_at=published_at, files=())
    return Checkpoint(version=version, name=parts[0].name if parts else "",
                      size=sum(p.size for p in parts), sha256=set_digest(parts),
                      published_at=published_at,
                      files=tuple(replace(p, published_at=published_at, files=())
                                  for p in parts))


def _by_name(part: Checkpoint) -> str:
    return part.name


@dataclass(frozen=True)
class NewPart:
    """A file a version uploads: its name, size, SHA-256 (and MD5, when known) and what
    gives its content (a path, or a fresh `files.Stream` for each attempt)."""

    name: str
    size: int
    sha256: str
    content: Callable[[], Any]
    md5: bytes | None = None


class CorruptCheckpoint(RuntimeError):
    """A checkpoint's data does not match its manifest; str() names it and what differs."""
