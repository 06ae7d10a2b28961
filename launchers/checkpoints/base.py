"""The interface of a checkpoint store: where a job's checkpoints are kept safe.

A checkpoint is one file the job wrote (e.g. `checkpoint.npz`), published as a numbered
version: the data object first, then a manifest (size, SHA-256, the original name) as the
commit marker, so that a half-written upload is never taken for a checkpoint. Versions are
verified (size and checksum of the data against the manifest) before anything depends on
them; pruning keeps the last N and never deletes the newest verified one.

    store = open_store("s3://bucket/jobs/7")     # or gs://..., or a directory
    store.publish(Path("ckpt/checkpoint.npz"))   # -> Checkpoint(version=1, ...)
    store.restore(Path("ckpt"))                  # newest verified -> ckpt/checkpoint.npz
    there.copy_in(store, store.list()[-1])       # that version, streamed into another store
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from costsched.model import InvalidInput


@dataclass(frozen=True)
class Checkpoint:
    version: int  # 1, 2, ... in publication order
    name: str  # the file name the job wrote
    size: int
    sha256: str
    published_at: datetime


class CorruptCheckpoint(RuntimeError):
    """A checkpoint's data does not match its manifest; str() names it and what differs."""


class CheckpointStore(ABC):
    uri: str

    @abstractmethod
    def publish(self, local: Path, name: str | None = None) -> Checkpoint:
        """Upload `local` as the next version (data, then the manifest as commit marker)."""

    @abstractmethod
    def list(self) -> list[Checkpoint]:
        """Committed versions (those with a manifest), oldest first."""

    @abstractmethod
    def verify(self, checkpoint: Checkpoint) -> bool:
        """True when the stored data has the manifest's size and SHA-256."""

    @abstractmethod
    def fetch(self, checkpoint: Checkpoint, dest_dir: Path) -> Path:
        """Download a version to dest_dir/<name> atomically, checking its checksum on the
        way (CorruptCheckpoint if it does not match: nothing is left at the destination)."""

    @abstractmethod
    def delete(self, checkpoint: Checkpoint) -> None:
        """Remove a version (manifest first, so it stops counting before its data goes)."""

    def chunks(self, checkpoint: Checkpoint) -> Iterator[bytes]:
        """A version's data as stored, chunk by chunk (not checked here: a store that copies
        it in checks it against the manifest on the way)."""
        raise NotImplementedError(f"{type(self).__name__}: no streamed reads")

    def copy_in(self, source: CheckpointStore, checkpoint: Checkpoint) -> Checkpoint:
        """Publish `source`'s version `checkpoint` here as the next version, streamed (never
        the whole file in memory, nothing on local disk): the data, then the manifest (the
        same name, size, SHA-256 and publication time) once the bytes received are the
        manifest's. CorruptCheckpoint when they are not: nothing is committed."""
        raise NotImplementedError(f"{type(self).__name__}: no streamed copies")

    def check(self) -> None:
        """Fail now, with one line, when the store cannot be used (a bucket that does not
        exist, a directory that cannot be written); by default, by listing it."""
        self.list()

    def newest_verified(self) -> Checkpoint | None:
        for checkpoint in reversed(self.list()):
            if self.verify(checkpoint):
                return checkpoint
        return None

    def restore(self, dest_dir: Path) -> Checkpoint | None:
        """The newest verified version into dest_dir; None when there is none."""
        newest = self.newest_verified()
        if newest is not None:
            self.fetch(newest, dest_dir)
        return newest

    def prune(self, keep: int) -> list[Checkpoint]:
        """Delete all but the last `keep` versions, never the newest verified one; returns
        the deleted ones."""
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise InvalidInput(f"checkpoints to keep {keep!r}: expected an integer >= 1")
        versions = self.list()
        newest = self.newest_verified()
        doomed = [c for c in versions[:-keep] if newest is None or c.version != newest.version]
        for checkpoint in doomed:
            self.delete(checkpoint)
        return doomed
