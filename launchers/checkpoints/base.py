"""The interface of a checkpoint store: where a job's checkpoints are kept safe.

A checkpoint is the complete set of files of the job's checkpoint directory (e.g.
`weights.bin` written once and `state.npz` every save; a file in a subfolder named by its
path below the directory, 'latest/state.json'), published as a numbered version:
the data of the files that changed first, under the version's folder, then a manifest
(each file's name, size, SHA-256 and the version whose folder holds its bytes) as the
commit marker, so that a half-written upload is never taken for a checkpoint. A file that
did not change since the version before is not uploaded again: the manifest points at the
version that holds it. Versions are verified (size and checksum of every file against the
manifest) before anything depends on them; pruning keeps the last N, never the newest
verified one, and never deletes the bytes of a file a kept version still names.

    store = open_store("s3://bucket/jobs/7")     # or gs://..., or a directory
    store.publish(Path("ckpt/checkpoint.npz"))   # -> Checkpoint(version=1, ...): one file
    store.publish_files({"a.bin": p, "b.npz": q}, carried=newest.parts)  # a set
    store.restore(Path("ckpt"))                  # newest verified -> ckpt/<its files>
    there.copy_in(store, store.list()[-1])       # that version, streamed into another store
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from costsched.model import InvalidInput
from launchers.checkpoints import files, layout
from launchers.checkpoints.version import (  # noqa: F401 - named here by the stores
    Checkpoint,
    CorruptCheckpoint,
    NewPart,
    make_checkpoint,
    set_digest,
)

MAX_CLAIMS = 100  # versions tried before giving up on a contended prefix


class CheckpointStore(ABC):
    uri: str

    # --- what each store implements, one file at a time ------------------------------

    @abstractmethod
    def list(self) -> list[Checkpoint]:
        """Committed versions (those with a manifest), oldest first."""

    @abstractmethod
    def verify_part(self, part: Checkpoint) -> bool:
        """True when the stored file `part` (at its holder version) has its manifest's size
        and SHA-256."""

    @abstractmethod
    def fetch_part(self, part: Checkpoint, dest_dir: Path) -> Path:
        """Download one file to dest_dir/<name> atomically, checking its checksum on the
        way (CorruptCheckpoint if it does not match: nothing is left at the destination)."""

    @abstractmethod
    def _next_version(self) -> int:
        """The next free version number (a local store claims it here)."""

    @abstractmethod
    def _put_part(self, version: int, part: NewPart, content: Any) -> bool:
        """Upload `content` as file `part.name` of `version` unless it exists: True when
        put, False when another publisher holds it. InvalidInput when a file changed
        while it was published."""

    @abstractmethod
    def _put_manifest(self, version: int, raw: bytes) -> bool:
        """Write the manifest of `version` unless one exists: True when written."""

    @abstractmethod
    def _drop_part(self, version: int, name: str) -> None:
        """Delete the file `name` of version `version` (nothing when it is not there)."""

    @abstractmethod
    def _drop_manifest(self, version: int) -> None:
        """Delete the manifest of `version` (nothing when it is not there)."""

    @abstractmethod
    def _folder(self, version: int) -> list[str]:
        """The names of the files in `version`'s folder."""

    def _release(self, version: int) -> None:
        """After a failed attempt at `version`: what else to undo (a claimed directory)."""
        return None

    def chunks(self, checkpoint: Checkpoint) -> Iterator[bytes]:
        """One file's data as stored, chunk by chunk (not checked here: a store that copies
        it in checks it against the manifest on the way)."""
        raise NotImplementedError(f"{type(self).__name__}: no streamed reads")

    # --- versions: sets of files --------------------------------------------------------

    def publish(self, local: Path, name: str | None = None) -> Checkpoint:
        """Upload the file `local` as the next version (a version of that one file)."""
        src = files.source(local)
        return self.publish_files({layout.check_name(name if name is not None
                                                     else src.name): src})

    def publish_files(self, paths: Mapping[str, Path],
                      carried: Sequence[Checkpoint] = ()) -> Checkpoint:
        """Publish the next version: the files `paths` (by name) uploaded, and `carried`
        (files of an earlier version, each at the version holding its bytes) named by its
        manifest without copying their bytes again."""
        new = []
        for name, path in paths.items():
            src = files.source(path)
            size, hashes = files.digests(src, "md5")
            new.append(NewPart(layout.check_name(name), size, hashes["sha256"].hex(),
                               lambda src=src: src, hashes["md5"]))
        taken = {p.name for p in new}
        kept = [p for p in carried if p.name not in taken]
        if not new and not kept:
            raise InvalidInput("checkpoint: no file to publish")
        return self._commit(new, kept, None)

    def copy_in(self, source: CheckpointStore, checkpoint: Checkpoint) -> Checkpoint:
        """Publish `source`'s version `checkpoint` here as the next version, every file
        streamed (never a whole file in memory, nothing on local disk) and checked against
        its manifest on the way; its manifest (the same files and publication time) once
        all are. CorruptCheckpoint when one is not: nothing is committed."""
        def stream(part: Checkpoint) -> Callable[[], Any]:
            where = f"copy of {source.uri} version {checkpoint.version}"
            return lambda: files.Stream(source.chunks(part), part, where)

        new = [NewPart(layout.check_name(p.name), p.size, p.sha256, stream(p))
               for p in checkpoint.parts]
        return self._commit(new, [], checkpoint.published_at)

    def _commit(self, new: Sequence[NewPart], carried: Sequence[Checkpoint],
                published_at: datetime | None) -> Checkpoint:
        """Claim the next free version: upload `new` into its folder, then its manifest;
        a version another publisher holds is left to it (ours removed) for the next."""
        version = self._next_version()
        for _ in range(MAX_CLAIMS):
            written: list[str] = []
            try:
                claimed = True
                for part in new:
                    content = part.content()
                    if not self._put_part(version, part, content):
                        claimed = False
                        break
                    written.append(part.name)
                    if isinstance(content, files.Stream):
                        content.check()  # every byte went through, and they are its
                if claimed:
                    checkpoint = make_checkpoint(
                        version, [*carried, *(_part(version, p) for p in new)],
                        published_at or layout.now())
                    if self._put_manifest(version, layout.encode_manifest(checkpoint)):
                        return checkpoint
            except BaseException:
                # No data without its manifest is left behind by a failure.
                for name in written:
                    with contextlib.suppress(Exception):
                        self._drop_part(version, name)
                with contextlib.suppress(Exception):
                    self._release(version)
                raise
            for name in written:
                self._drop_part(version, name)
            self._release(version)
            version = max(version + 1, self._next_version())
        raise RuntimeError(f"checkpoint store {self.uri}: no free version after {MAX_CLAIMS} "
                           "tries (too many concurrent publishers)")

    def verify(self, checkpoint: Checkpoint) -> bool:
        """True when every file of the version has its manifest's size and SHA-256."""
        return all(self.verify_part(p) for p in checkpoint.parts)

    def fetch(self, checkpoint: Checkpoint, dest_dir: Path) -> Path:
        """Every file of the version into dest_dir, each atomically and checked (a file
        that does not match raises CorruptCheckpoint); the file's path for a version of
        one file, else dest_dir."""
        placed = [self.fetch_part(p, dest_dir) for p in checkpoint.parts]
        return placed[0] if len(placed) == 1 else Path(dest_dir)

    def delete(self, checkpoint: Checkpoint,
               spare: frozenset[tuple[int, str]] = frozenset()) -> None:
        """Remove a version: its manifest first (it stops counting before its data goes),
        then every file it names or its folder holds, but those in `spare` ((version,
        name) of files another version still names)."""
        self._drop_manifest(checkpoint.version)
        doomed = {(p.version, p.name) for p in checkpoint.parts}
        doomed |= {(checkpoint.version, n) for n in self._folder(checkpoint.version)}
        for version, name in sorted(doomed - spare):
            self._drop_part(version, name)

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
        """Delete all but the last `keep` versions, never the newest verified one, nor the
        bytes of a file a kept version names; returns the deleted ones."""
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise InvalidInput(f"checkpoints to keep {keep!r}: expected an integer >= 1")
        versions = self.list()
        newest = self.newest_verified()
        doomed = [c for c in versions[:-keep] if newest is None or c.version != newest.version]
        gone = {c.version for c in doomed}
        spare = frozenset((p.version, p.name) for c in versions if c.version not in gone
                          for p in c.parts)
        for checkpoint in doomed:
            self.delete(checkpoint, spare)
        return doomed


def _part(version: int, new: NewPart) -> Checkpoint:
    return Checkpoint(version=version, name=new.name, size=new.size, sha256=new.sha256,
                      published_at=layout.now())
