"""The files of a checkpoint publish (`launchers.publisher`): what tells a file changed
between two looks, their staging beside the checkpoints (hard links, or copies of what a
look saw of a log), their digests, and whether one changed while it was staged."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from pathlib import Path

from launchers.state_logs import copy_prefix

STAGING = ".publishing"  # hard links of the files being published, beside the checkpoints


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def stage_log(directory: Path, staging: Path, name: str, seen: os.stat_result) -> Path:
    """A copy of what the look saw of a log (`copy_prefix`): the job may append to it
    meanwhile (a log replaced or cut since is found out by `grown_since`)."""
    staged = staging / name
    staged.parent.mkdir(parents=True, exist_ok=True)
    staged.unlink(missing_ok=True)
    copy_prefix(directory / name, staged, seen.st_size, seen.st_mtime_ns)
    return staged


def stage(directory: Path, staging: Path, name: str) -> Path:
    """A hard link to the file (a copy where links cannot be made); a file renamed over
    or removed since the look is found out by `changed_since`."""
    staged = staging / name
    staged.parent.mkdir(parents=True, exist_ok=True)
    staged.unlink(missing_ok=True)
    try:
        os.link(directory / name, staged)
    except FileNotFoundError:
        pass
    except OSError:  # no hard links here: a copy does the same, slower
        with contextlib.suppress(FileNotFoundError):
            shutil.copy2(directory / name, staged)
    return staged


def rewritten(staged: Path, was: os.stat_result) -> bool:
    """Whether the staged file (a hard link, or a copy keeping its time) is no longer what
    the look saw: written again in place (as a marker may be) while it was read."""
    now = staged.stat()
    return (now.st_size, now.st_mtime_ns) != (was.st_size, was.st_mtime_ns)


def changed_since(path: Path, was: os.stat_result) -> bool:
    """Whether `path` is no longer the file it was at the look (renamed over, rewritten)."""
    try:
        now = path.stat()
    except FileNotFoundError:
        return True
    return (now.st_size, now.st_mtime_ns, now.st_ino) != (was.st_size, was.st_mtime_ns,
                                                         was.st_ino)
