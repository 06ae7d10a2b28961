"""Results that are pure functions of costsched's own files (its code and bundled data) and
of a few named files, kept between runs in the user cache directory: the bundled catalog's
frames, which every plan reads, take a tenth of a second of CPU to build from the CSV files
and a few milliseconds to load once kept.

A kept result is used only when it was made by the same costsched files (each module and
bundled file, by its path, size and modification time), the same `files` (by content: a
file rewritten within the clock's tick is seen), the same Python, and what else the
caller names (the versions of the libraries whose objects it holds); else it is
computed again and kept in its place. A cache that cannot be read or written is no error:
the result is computed, as without one. The cache directory is the user's own, as their
configuration is: what is kept there is as trusted as the code that wrote it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

_PACKAGE = Path(__file__).resolve().parent


def kept(name: str, compute: Callable[[], T], files: Sequence[Path | None] = (),
         also: tuple[str, ...] = ()) -> T:
    """`compute()`, or the result kept under `name` by an earlier run whose costsched
    files, `files` (None: no file) and `also` (such as the versions of the libraries whose
    objects the result holds) were the same; a new result is kept."""
    path = cache_dir() / f"{name}.pickle"
    stamp = (code_stamp(), tuple(_content(f) for f in files), also)
    try:
        with open(path, "rb") as fh:
            if pickle.load(fh) == stamp:  # the stamp first: a stale result is not loaded
                return pickle.load(fh)
    except Exception:  # noqa: BLE001 - none yet, another version's, or torn: computed again
        pass
    value = compute()
    _write(path, stamp, value)
    return value


def cache_dir() -> Path:
    """`kept` in the user cache directory ($XDG_CACHE_HOME/costsched on Linux)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("costsched")) / "kept"


@cache
def code_stamp() -> str:
    """costsched's code and bundled data as they are (each module and data file's path,
    size and modification time), with the Python version, as one digest."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(sys.version.encode())
    for root, dirs, names in os.walk(_PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith((".py", ".csv")):
                stat = os.stat(os.path.join(root, name))
                digest.update(f"{root}/{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()


def _content(path: Path | None) -> str | None:
    """A file's content digest; None when there is no such file."""
    if path is None:
        return None
    try:
        return hashlib.blake2b(Path(path).read_bytes(), digest_size=16).hexdigest()
    except OSError:
        return None


def _write(path: Path, stamp: tuple, value: object) -> None:
    """Keep `value` with its stamp at `path`, whole or not at all (written aside, then
    moved over)."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, aside = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(stamp, fh, protocol=pickle.HIGHEST_PROTOCOL)
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(aside, path)
        except BaseException:
            os.unlink(aside)
            raise
    except (OSError, pickle.PicklingError):
        pass  # a cache that cannot be written: the next run computes it again
