"""A checkpoint store in a local (or mounted) directory.

A publisher claims a version by creating its directory (`mkdir` is atomic: two publishers
never get the same version), copies the data in under a temp name and renames it, then
writes the manifest the same way; a crash before the manifest leaves an unlisted version.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from costsched.model import InvalidInput
from launchers.checkpoints import files, layout
from launchers.checkpoints.base import Checkpoint, CheckpointStore, CorruptCheckpoint

log = logging.getLogger(__name__)


class LocalStore(CheckpointStore):
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser()
        self.uri = str(self.root)

    def __repr__(self) -> str:
        return f"LocalStore({self.uri!r})"

    def publish(self, local: Path, name: str | None = None) -> Checkpoint:
        src = files.source(local)
        name = layout.check_name(name if name is not None else src.name)
        files.writable_dir(self.root, "checkpoint directory")
        version = self._claim()
        folder = self.root / layout.version_dir(version)
        try:
            sha, size = _copy_in(src, folder / name)
            checkpoint = Checkpoint(version=version, name=name, size=size, sha256=sha,
                                    published_at=layout.now())
            files.write_atomic(self.root / layout.manifest_name(version),
                               layout.encode_manifest(checkpoint))
        except BaseException:
            # A failed publish (a full disk...) leaves no trace: no empty version directory
            # for every retry, and its number is free again.
            shutil.rmtree(folder, ignore_errors=True)
            raise
        log.info("published %s version %d (%s, %d bytes)", self.uri, version, name, size)
        return checkpoint

    def copy_in(self, source: CheckpointStore, checkpoint: Checkpoint) -> Checkpoint:
        name = layout.check_name(checkpoint.name)
        files.writable_dir(self.root, "checkpoint directory")
        version = self._claim()
        folder = self.root / layout.version_dir(version)
        copy = replace(checkpoint, version=version)
        try:
            with files.partial(folder, name) as part:
                stream = files.Stream(source.chunks(checkpoint), checkpoint,
                                      f"copy of {source.uri} version {checkpoint.version}")
                part.copy_from(stream)  # type: ignore[arg-type]
                stream.check()
                part.commit(checkpoint, f"copy in {self.uri} version {version}")
            files.write_atomic(self.root / layout.manifest_name(version),
                               layout.encode_manifest(copy))
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        log.info("copied %s version %d in as %s version %d", source.uri, checkpoint.version,
                 self.uri, version)
        return copy

    def chunks(self, checkpoint: Checkpoint) -> Iterator[bytes]:
        try:
            stream = self._data(checkpoint).open("rb")
        except FileNotFoundError:
            raise CorruptCheckpoint(f"checkpoint {self.uri} version {checkpoint.version} "
                                    f"({checkpoint.name}): data missing") from None
        with stream:
            while chunk := stream.read(files.CHUNK):
                yield chunk

    def check(self) -> None:
        files.writable_dir(self.root, "checkpoint directory")

    def list(self) -> list[Checkpoint]:
        def read(version: int) -> bytes | None:
            try:
                return (self.root / layout.manifest_name(version)).read_bytes()
            except FileNotFoundError:  # deleted since the directory was read
                return None

        return layout.read_manifests(self.uri, self._versions(layout.MANIFEST_RE), read)

    def verify(self, checkpoint: Checkpoint) -> bool:
        data = self._data(checkpoint)
        try:
            if data.stat().st_size != checkpoint.size:
                return False
            size, hashes = files.digests(data)
        except OSError:
            return False
        return not files.check(checkpoint, size, hashes["sha256"].hex())

    def fetch(self, checkpoint: Checkpoint, dest_dir: Path) -> Path:
        where = f"checkpoint {self.uri} version {checkpoint.version} ({checkpoint.name})"
        with files.partial(Path(dest_dir), checkpoint.name) as part:
            try:
                with self._data(checkpoint).open("rb") as stream:
                    part.copy_from(stream)
            except FileNotFoundError:
                raise CorruptCheckpoint(f"{where}: data missing") from None
            return part.commit(checkpoint, where)

    def delete(self, checkpoint: Checkpoint) -> None:
        (self.root / layout.manifest_name(checkpoint.version)).unlink(missing_ok=True)
        files.fsync_dir(self.root)
        shutil.rmtree(self.root / layout.version_dir(checkpoint.version), ignore_errors=True)

    # --- internals -------------------------------------------------------------------

    def _data(self, checkpoint: Checkpoint) -> Path:
        return self.root / layout.version_dir(checkpoint.version) / checkpoint.name

    def _versions(self, pattern: re.Pattern[str]) -> set[int]:
        try:
            names = os.listdir(self.root)
        except FileNotFoundError:
            return set()
        return {int(m.group(1)) for m in map(pattern.match, names) if m}

    def _claim(self) -> int:
        """The next version number, claimed by creating its directory."""
        taken = self._versions(layout.MANIFEST_RE) | self._versions(layout.VERSION_DIR_RE)
        version = max(taken, default=0) + 1
        while True:
            try:
                (self.root / layout.version_dir(version)).mkdir()
                return version
            except FileExistsError:
                version += 1
            except OSError as exc:
                raise InvalidInput(f"checkpoint directory {self.root}: not writable "
                                   f"({exc.strerror})") from None


def _copy_in(src: Path, dest: Path) -> tuple[str, int]:
    """Copy src to dest (temp name, fsync, rename), hashing on the way: (sha256, size)."""
    with files.partial(dest.parent, dest.name) as part:
        with src.open("rb") as stream:
            part.copy_from(stream)
        size, sha = part.seal()
        part.place()
    return sha, size
