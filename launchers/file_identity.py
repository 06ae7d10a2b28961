"""Which file a path names, as the publisher's looks compare it (`file_id`): its inode
number and, where the filesystem keeps it, its birth time.

An inode number alone does not tell a file from the one before it: on ext4 a file written
as `last.ckpt.tmp` and renamed over `last.ckpt` gets the inode number that a file replaced
just before gave back, so a save that renames twice (or two saves between two looks) leaves
`last.ckpt` under the number it had, as if written in place. A file created since has
another birth time, whatever its number: the two together tell a file renamed into place
from one rewritten in place. Where no birth time is kept (an older kernel or C library, a
network filesystem), the number alone is what the looks compare (`told_apart` says so)."""

from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path

_AT_FDCWD = -100
_AT_SYMLINK_NOFOLLOW = 0x100
_STATX_INO = 0x100
_STATX_BTIME = 0x800
_SIZE = 256  # struct statx
_BIRTH = 64  # a file id's bits above this hold the birth time (nanoseconds)


def _libc_statx():  # noqa: ANN202 - a ctypes function, or None
    try:
        call = ctypes.CDLL(None, use_errno=True).statx
    except (AttributeError, OSError):  # no statx in this C library
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint,
                     ctypes.c_void_p]
    call.restype = ctypes.c_int
    return call


_statx = _libc_statx()


def birth(path: Path | str) -> tuple[int, int] | None:
    """(inode number, birth time in ns) of the file at `path` (a link not followed), or None
    where the system or its filesystem does not say when the file was made."""
    if _statx is None:
        return None
    buf = ctypes.create_string_buffer(_SIZE)
    if _statx(_AT_FDCWD, os.fsencode(path), _AT_SYMLINK_NOFOLLOW,
              _STATX_INO | _STATX_BTIME, buf) != 0:
        return None
    (mask,) = struct.unpack_from("I", buf, 0)
    if mask & (_STATX_INO | _STATX_BTIME) != _STATX_INO | _STATX_BTIME:
        return None
    (ino,) = struct.unpack_from("Q", buf, 32)
    sec, nsec = struct.unpack_from("qI", buf, 80)
    return ino, sec * 1_000_000_000 + nsec


def file_id(path: Path | str, info: os.stat_result) -> int:
    """The file `info` (its lstat) tells of at `path`: its inode number, with its birth time
    where the filesystem keeps one (a file renamed over the path since `info` was read: its
    number alone, which no id with a birth time equals)."""
    born = birth(path)
    if born is None or born[0] != info.st_ino:
        return info.st_ino
    return info.st_ino | max(born[1], 1) << _BIRTH


def told_apart(file: int) -> bool:
    """Whether the id holds a birth time: a file renamed over one of the same inode number
    has another id (else the two cannot be told apart)."""
    return file >> _BIRTH != 0
