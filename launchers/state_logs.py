"""The publisher's state-and-logs rule (launchers.publisher's doc): a checkpoint directory
that holds one state file, replaced whole by a rename at each save (`state.pkl`, written as
`state.pkl.tmp`), and logs the job only appends to (`metrics.jsonl`). What a look tells of
it, against the look before; and a log's copy as it was at the look (its prefix is whole,
while the job may append to it as it is published)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

# A file under one of these names is a log: the job appends to it (the same file, growing).
# A file grown in place under any other name (np.savez straight to its final name) is a
# state file being written, never a log.
LOG_SUFFIXES = (".log", ".jsonl", ".csv", ".tsv", ".txt", ".out")

Files = dict[str, tuple[int, int, int]]  # path -> (size, mtime_ns, inode), at one look


def is_log(name: str) -> bool:
    """Whether `name` is a log's (its suffix, LOG_SUFFIXES)."""
    return name.rsplit("/", 1)[-1].lower().endswith(LOG_SUFFIXES)


def appended(was: tuple[int, int, int], now: tuple[int, int, int]) -> bool:
    """The same file, unchanged or grown: appended to, never rewritten nor replaced."""
    return was[2] == now[2] and (now[0] > was[0] or now[:2] == was[:2])


def judge(before: Files, now: Files) -> tuple[str | None, bool]:
    """(the state file, when it was replaced by a rename since the look before, else None;
    whether the job was seen doing what the rule does not cover: two files or more that are
    not logs, one of them removed (a save that clears the directory first), or a log
    changed otherwise than by appends). The complete files of two looks (`before` empty at
    the first); a state file changed under the same inode is not taken (a file written in
    place; or, as an inode is reused, renamed in twice between the looks: the next save is
    taken)."""
    others = [n for n in now if not is_log(n)]
    beyond = len(others) > 1 or any(not is_log(n) and n not in now for n in before) or any(
        is_log(n) and n in before and not appended(before[n], info) for n, info in now.items())
    if beyond or len(others) != 1:
        return None, beyond
    [state] = others
    was = before.get(state)
    return (state if was is not None and was[2] != now[state][2] else None), False


def copy_prefix(source: Path, staged: Path, size: int, mtime_ns: int) -> None:
    """The first `size` bytes of the log at `source` (what a look saw) copied to `staged`,
    with the look's modification time; a log gone since leaves nothing (found out by
    `grown_since`)."""
    with contextlib.suppress(FileNotFoundError), source.open("rb") as src, \
            staged.open("wb") as out:
        left = size
        while left > 0 and (chunk := src.read(min(left, 1 << 20))):
            out.write(chunk)
            left -= len(chunk)
    with contextlib.suppress(FileNotFoundError):
        os.utime(staged, ns=(mtime_ns, mtime_ns))


def grown_since(path: Path, was: os.stat_result) -> bool:
    """Whether the log at `path` is still the file the look saw, appended to at most (its
    copied prefix is then what the job wrote)."""
    try:
        now = path.stat()
    except FileNotFoundError:
        return False
    return now.st_ino == was.st_ino and now.st_size >= was.st_size
