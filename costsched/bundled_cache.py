"""The bundled catalog's parsed forms kept on disk between commands: reading the bundled
price files (thousands of dated rows) into frames and rows costs each command tens of
milliseconds of CPU; loading what the first command made costs a millisecond or two.

A value is kept under the user cache directory ($XDG_CACHE_HOME/costsched/bundled on
Linux), in a folder named by a digest of every input it may depend on: the contents of
the bundled data files, of the discovered instance types file (`costsched catalog
refresh`) and of the modules that build the values (SOURCES), and the versions of Python
and of the libraries the value holds. Any change of an input makes a new folder, so a
kept value is never stale. A value is written to a temporary file then renamed over its
name: two commands writing at once each leave a whole file, and a reader sees a whole
file or none. A file that cannot be read is built again; a folder that cannot be written
is passed by (the value is built as before, each time).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
from collections.abc import Callable
from functools import cache, wraps
from importlib import import_module
from pathlib import Path
from typing import Any, TypeVar

PACKAGE = Path(__file__).parent
DATA = PACKAGE / "data"
# The modules whose code shapes a kept value (its builders, the names and sources they
# stamp on rows, this file's layout): a change to any of them is a new key.
SOURCES = ("bundled_cache.py", "bundled_prices.py", "catalog.py", "catalog_version.py")
# Folders kept per module: those of the newest keys (another install of costsched, or
# the one before an upgrade, may still use its own); older ones are removed.
KEPT_FOLDERS = 3
F = TypeVar("F", bound=Callable[..., Any])


def kept(*libraries: str) -> Callable[[F], F]:
    """A function of the bundled data (and of its arguments: plain values, told apart by
    their repr) whose result is kept on disk; `libraries`: those whose objects the result
    holds (pandas and numpy for a frame), their versions part of the key."""

    def decorate(build: F) -> F:
        stem = build.__module__.rsplit(".", 1)[-1]

        @wraps(build)
        def value(*args: Any, **kwargs: Any) -> Any:
            name = f"{build.__module__}.{build.__qualname__}{args!r}{sorted(kwargs.items())!r}"
            return _kept(name, lambda: build(*args, **kwargs), stem, libraries)

        return value  # type: ignore[return-value]

    return decorate


def _kept(name: str, build: Callable[[], Any], stem: str,
          libraries: tuple[str, ...]) -> Any:
    folder = _folder(stem, libraries)
    path = folder / (hashlib.sha256(name.encode()).hexdigest()[:24] + ".pickle")
    try:
        with path.open("rb") as fh:
            return pickle.load(fh)
    except Exception:  # noqa: BLE001 - missing, partial or unreadable: built again
        pass
    value = build()
    with contextlib.suppress(OSError):  # not kept: built again by the next command
        _write(folder, path, value)
    return value


def _write(folder: Path, path: Path, value: Any) -> None:
    """`value` pickled at `path`, by way of a temporary file renamed over it."""
    import tempfile

    fresh = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    if fresh:
        _prune(folder)
    with tempfile.NamedTemporaryFile(dir=folder, delete=False, suffix=".tmp") as fh:
        try:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:
            fh.close()
            os.unlink(fh.name)
            raise
    os.replace(fh.name, path)


def _prune(folder: Path) -> None:
    """The module's folders beyond the KEPT_FOLDERS newest removed (`folder` is kept)."""
    import shutil

    others = []
    for other in folder.parent.iterdir():
        try:
            if other != folder and other.is_dir():
                others.append((other.stat().st_mtime, other))
        except OSError:  # removed meanwhile by another command
            pass
    for _, other in sorted(others, reverse=True)[KEPT_FOLDERS - 1:]:
        shutil.rmtree(other, ignore_errors=True)


def _folder(stem: str, libraries: tuple[str, ...]) -> Path:
    from costsched.bundled_prices import discovered_path

    digest = hashlib.sha256(_package_digest().encode())
    for library in libraries:
        digest.update(f"{library} {import_module(library).__version__}\0".encode())
    discovered = discovered_path()
    digest.update(str(discovered).encode() + b"\0")
    try:
        digest.update(discovered.read_bytes())
    except OSError:  # none (or unreadable: the builder says so)
        digest.update(b"\0-")
    return _root() / stem / digest.hexdigest()[:24]


@cache  # the package's files do not change under a running command
def _package_digest() -> str:
    digest = hashlib.sha256(sys.version.encode())
    for path in [*sorted(DATA.glob("*.csv")), *(PACKAGE / name for name in SOURCES)]:
        digest.update(b"\0" + path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _root() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("costsched")) / "bundled"
