"""A checkpoint store in a local (or mounted) directory.

A publisher claims a version by creating its directory (`mkdir` is atomic: two publishers
never get the same version), copies each new file in under a temp name and renames it,
then writes the manifest the same way; a crash before the manifest leaves an unlisted
version.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from costsched.model import InvalidInput
from launchers.checkpoints import files, layout
from launchers.checkpoints.base import Checkpoint, CheckpointStore, CorruptCheckpoint, NewPart

log = logging.getLogger(__name__)


class LocalStore(CheckpointStore):
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser()
        self.uri = str(self.root)

    def __repr__(self) -> str:
        return f"LocalStore({self.uri!r})"

    # --- one file at a time (`CheckpointStore` makes versions of sets of them) --------

    def _next_version(self) -> int:
        files.writable_dir(self.root, "checkpoint directory")
        return self._claim()

    def _put_part(self, version: int, part: NewPart, content: Any) -> bool:
        folder = self.root / layout.version_dir(version)
        with files.partial(folder, part.name) as out:
            if isinstance(content, files.Stream):
                out.copy_from(content)  # type: ignore[arg-type]
                out.seal()
            else:
                with Path(content).open("rb") as stream:
                    out.copy_from(stream)
                size, sha = out.seal()
                if (size, sha) != (part.size, part.sha256):
                    raise InvalidInput(f"checkpoint file {content}: changed while it was "
                                       "published")
            out.place()
        return True

    def _put_manifest(self, version: int, raw: bytes) -> bool:
        files.write_atomic(self.root / layout.manifest_name(version), raw)
        log.info("published %s version %d", self.uri, version)
        return True

    def _release(self, version: int) -> None:
        # A failed publish (a full disk...) leaves no trace: no empty version directory
        # for every retry, and its number is free again.
        if not (self.root / layout.manifest_name(version)).exists():
            shutil.rmtree(self.root / layout.version_dir(version), ignore_errors=True)

    def _drop_part(self, version: int, name: str) -> None:
        folder = self.root / layout.version_dir(version)
        path = folder / name
        path.unlink(missing_ok=True)
        for parent in path.parents:  # the subfolders it leaves empty ('latest/')
            if parent == folder or not parent.is_relative_to(folder):
                break
            try:
                parent.rmdir()
            except OSError:  # not empty (or gone): the folders above are not either
                break

    def _drop_manifest(self, version: int) -> None:
        (self.root / layout.manifest_name(version)).unlink(missing_ok=True)
        files.fsync_dir(self.root)

    def _folder(self, version: int) -> list[str]:
        """Every file under the version's folder, by its path below it ('latest/a.json')."""
        folder = self.root / layout.version_dir(version)
        return sorted(Path(top, name).relative_to(folder).as_posix()
                      for top, _, names in os.walk(folder) for name in names)

    def delete(self, checkpoint: Checkpoint,
               spare: frozenset[tuple[int, str]] = frozenset()) -> None:
        super().delete(checkpoint, spare)
        folder = self.root / layout.version_dir(checkpoint.version)
        if not any(v == checkpoint.version for v, _ in spare):
            shutil.rmtree(folder, ignore_errors=True)  # temp files of a crash too

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

    def verify_part(self, part: Checkpoint) -> bool:
        data = self._data(part)
        try:
            if data.stat().st_size != part.size:
                return False
            size, hashes = files.digests(data)
        except OSError:
            return False
        return not files.check(part, size, hashes["sha256"].hex())

    def fetch_part(self, part: Checkpoint, dest_dir: Path) -> Path:
        where = f"checkpoint {self.uri} version {part.version} ({part.name})"
        with files.partial(Path(dest_dir), part.name) as out:
            try:
                with self._data(part).open("rb") as stream:
                    out.copy_from(stream)
            except FileNotFoundError:
                raise CorruptCheckpoint(f"{where}: data missing") from None
            return out.commit(part, where)

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

