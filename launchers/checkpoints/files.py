"""Local file work that every checkpoint store shares: checking the file to publish,
hashing, atomic writes (temp name in the same directory, fsync, rename), fetching into a
partial file that only reaches its name once its size and SHA-256 match the manifest, and
the stream a version is copied through from one store to another (`Stream`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from costsched.model import InvalidInput
from launchers.checkpoints import layout
from launchers.checkpoints.version import Checkpoint, CorruptCheckpoint

CHUNK = 1 << 20


def source(local: Path) -> Path:
    """The file to publish, checked: it exists, is a regular file and can be read."""
    path = Path(local)
    if not path.exists():
        raise InvalidInput(f"checkpoint file {path}: not found")
    if not path.is_file():
        raise InvalidInput(f"checkpoint file {path}: not a regular file")
    try:
        with path.open("rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise InvalidInput(f"checkpoint file {path}: cannot be read ({exc.strerror})") from None
    return path


def digests(path: Path, *names: str) -> tuple[int, dict[str, bytes]]:
    """(size, {algorithm: digest}) of a file, read once; SHA-256 always included."""
    hashes = {name: hashlib.new(name) for name in ("sha256", *names)}
    size = 0
    with Path(path).open("rb") as handle:
        while chunk := handle.read(CHUNK):
            size += len(chunk)
            for h in hashes.values():
                h.update(chunk)
    return size, {name: h.digest() for name, h in hashes.items()}


def writable_dir(path: Path, what: str) -> Path:
    """`path` as a directory (created if missing); InvalidInput naming it when it cannot be."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"{what} {path}: cannot be created ({exc.strerror})") from None
    if not path.is_dir():
        raise InvalidInput(f"{what} {path}: not a directory")
    return path


def fsync_dir(path: Path) -> None:
    """Make a rename in `path` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _temp_in(directory: Path, name: str, what: str) -> tuple[int, Path]:
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".partial", dir=directory)
    except OSError as exc:
        raise InvalidInput(f"{what} {directory}: not writable ({exc.strerror})") from None
    return fd, Path(temp)


def write_atomic(path: Path, data: bytes, what: str = "checkpoint directory") -> None:
    """Write `data` to `path` so that readers see the old file or the whole new one."""
    fd, temp = _temp_in(path.parent, path.name, what)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


class Partial:
    """A file being fetched into dest_dir: written through `write` (hashed on the way) or
    by an SDK at `path`; `commit` checks it against the manifest and renames it."""

    def __init__(self, handle: BinaryIO, path: Path, dest: Path) -> None:
        self.handle, self.path, self.dest = handle, path, dest
        self._sha = hashlib.sha256()
        self._size = 0
        self._hashed = True  # False once something other than `write` filled the file

    def write(self, chunk: bytes) -> None:
        self.handle.write(chunk)
        self._sha.update(chunk)
        self._size += len(chunk)

    def copy_from(self, stream: BinaryIO) -> None:
        while chunk := stream.read(CHUNK):
            self.write(chunk)

    def written_externally(self) -> None:
        self._hashed = False

    def seal(self) -> tuple[int, str]:
        """Flush to disk; (size, sha256 hex) of what the file holds."""
        self.handle.flush()
        os.fsync(self.handle.fileno())
        if self._hashed:
            return self._size, self._sha.hexdigest()
        size, hashes = digests(self.path)
        return size, hashes["sha256"].hex()

    def place(self) -> Path:
        """Rename the sealed file to its destination."""
        os.replace(self.path, self.dest)
        fsync_dir(self.dest.parent)
        return self.dest

    def commit(self, checkpoint: Checkpoint, where: str) -> Path:
        """Seal, check against the manifest (CorruptCheckpoint naming `where`), place."""
        mismatch = check(checkpoint, *self.seal())
        if mismatch:
            raise CorruptCheckpoint(f"{where}: {mismatch}")
        return self.place()


def check(checkpoint: Checkpoint, size: int, sha256: str) -> str:
    """'' when (size, sha256) are the manifest's, else what differs."""
    if size != checkpoint.size:
        return f"size {size} bytes, manifest says {checkpoint.size}"
    if sha256 != checkpoint.sha256:
        return f"sha256 {sha256}, manifest says {checkpoint.sha256}"
    return ""


@contextlib.contextmanager
def partial(dest_dir: Path, name: str) -> Iterator[Partial]:
    """A Partial for dest_dir/name (`name` a path below dest_dir: 'latest/state.json', its
    folders made); the temp file is removed unless committed. A name that is not a plain
    path below dest_dir (as a manifest from a store could say) is refused: InvalidInput."""
    top = writable_dir(dest_dir, "checkpoint destination")
    dest = top / layout.check_name(name)
    folder = writable_dir(dest.parent, "checkpoint destination")
    if not folder.resolve().is_relative_to(top.resolve()):  # a folder that links outside
        raise InvalidInput(f"checkpoint destination {dest}: its folder leads outside {top}")
    fd, temp = _temp_in(folder, dest.name, "checkpoint destination")
    handle = os.fdopen(fd, "w+b")
    try:
        yield Partial(handle, temp, dest)
    finally:
        handle.close()
        temp.unlink(missing_ok=True)


class Stream:
    """Another store's version read as a file (`read`), its bytes hashed and counted on the
    way, as a store copies it in (`CheckpointStore.copy_in`): never more than `read` asks
    for and one chunk held (an SDK reading a few KB at a time copies each byte once). More
    bytes than the manifest's size is CorruptCheckpoint at once; `check` says whether what
    went through is the manifest's size and SHA-256."""

    def __init__(self, chunks: Iterable[bytes], checkpoint: Checkpoint, where: str) -> None:
        self.checkpoint, self.where = checkpoint, where
        self._chunks = iter(chunks)
        self._held, self._at = b"", 0  # the chunk being read, and how far
        self.sha = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.size

    def read(self, size: int | None = -1) -> bytes:
        wanted = None if size is None or size < 0 else size
        parts: list[bytes] = []
        have = 0
        while wanted is None or have < wanted:
            if self._at >= len(self._held):
                chunk = next(self._chunks, None)
                if chunk is None:
                    break
                self._held, self._at = chunk, 0
                continue
            end = len(self._held) if wanted is None else \
                min(len(self._held), self._at + wanted - have)
            parts.append(self._held[self._at:end])
            have += end - self._at
            self._at = end
        out = parts[0] if len(parts) == 1 else b"".join(parts)
        self.sha.update(out)
        self.size += len(out)
        if self.size > self.checkpoint.size:
            raise CorruptCheckpoint(f"{self.where}: more than the manifest's "
                                    f"{self.checkpoint.size} bytes")
        return out

    def check(self) -> None:
        """CorruptCheckpoint naming what differs, unless every byte went through and they
        are the manifest's size and SHA-256."""
        left = self._held[self._at:]
        if self.size == self.checkpoint.size and not left:
            left = next(self._chunks, b"")  # the source says it has ended
        if left:
            raise CorruptCheckpoint(f"{self.where}: more than the manifest's "
                                    f"{self.checkpoint.size} bytes")
        mismatch = check(self.checkpoint, self.size, self.sha.hexdigest())
        if mismatch:
            raise CorruptCheckpoint(f"{self.where}: {mismatch}")
