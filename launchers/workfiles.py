"""Which files of a workdir are packed: in a git work tree, those git would commit (`git
ls-files -co --exclude-standard`); elsewhere every file but those the `.gitignore` files
exclude; either way `.costschedignore` at the top excludes more. Only regular files and
links are packed: FIFOs, sockets and devices are listed apart (`Listing.skipped`), and an
entry that cannot be read is one line naming it (InvalidInput)."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from costsched.model import InvalidInput
from launchers import ignore

IGNORE_FILE = ".costschedignore"
GIT_SECONDS = 120.0  # a git listing that takes longer is waiting on something


@dataclass
class Listing:
    """The files to pack, and what was seen but not packed."""

    files: list[str]
    skipped: list[str]  # "path (FIFO)": entries that are not files, directories or links


def _read_rules(path: Path, base: str) -> list[ignore.Rule]:
    """The rules of an ignore file; none when there is no such file, or when it is not a
    regular file (a FIFO would block the read for ever; git reads no linked ignore file
    either). InvalidInput names a file that cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return []
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            return []  # a link, a socket, a directory: not an ignore file
        raise unreadable(path, exc) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        with os.fdopen(fd, "rb", closefd=False) as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError as exc:
        raise unreadable(path, exc) from None
    finally:
        os.close(fd)
    return ignore.parse_ignore(text, base)


def unreadable(path: Path | str, exc: OSError) -> InvalidInput:
    why = exc.strerror or type(exc).__name__
    return InvalidInput(f"{path}: cannot be read ({why}); make it readable, or exclude it in "
                        f"{IGNORE_FILE} at the workdir's top (.gitignore syntax)")


def list_files(workdir: Path) -> list[str]:
    """The workdir's files to pack, relative '/'-separated paths, sorted."""
    return listing(workdir).files


def listing(workdir: Path) -> Listing:
    extra = _read_rules(workdir / IGNORE_FILE, "")
    if not _in_work_tree(workdir):
        return _walk(workdir, extra)
    # git blocks for ever reading a .gitignore that is a FIFO: found first, and refused
    # (git lists no FIFOs or sockets: said from here; what git skips unread is its call)
    walked = _walk(workdir, extra, strict=False)
    blocking = [s for s in walked.skipped
                if s.split(" (")[0].rsplit("/", 1)[-1] == ".gitignore"]
    if blocking:
        raise InvalidInput(f"workdir {workdir}: {blocking[0]}: git would wait for ever "
                           "reading it; make it a file or remove it")
    listed = _git_files(workdir)
    if listed is None:
        return _walk(workdir, extra)
    out, skipped = [], []
    for rel in listed:
        parts = rel.split("/")
        # a directory excluded by .costschedignore excludes what is under it
        if any(ignore.ignored(extra, "/".join(parts[:k]), True) for k in range(1, len(parts))):
            continue
        try:
            mode = os.lstat(workdir / rel).st_mode
        except FileNotFoundError:
            continue  # deleted but still tracked
        except OSError as exc:
            raise unreadable(workdir / rel, exc) from None
        if stat.S_ISDIR(mode):
            continue  # a submodule's directory
        if ignore.ignored(extra, rel, False):
            continue
        if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
            out.append(rel)
        else:
            skipped.append(f"{rel} ({kind(mode)})")
    return Listing(sorted(out), sorted({*skipped, *walked.skipped}))


def kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "not a file"


def _in_work_tree(workdir: Path) -> bool:
    try:
        inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=workdir,
                                capture_output=True, text=True, check=False,
                                stdin=subprocess.DEVNULL, timeout=GIT_SECONDS)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return inside.returncode == 0 and inside.stdout.strip() == "true"


def _git_files(workdir: Path) -> list[str] | None:
    """`git ls-files -co --exclude-standard` from the workdir; None when git cannot say."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"],
                                cwd=workdir, capture_output=True, check=True,
                                stdin=subprocess.DEVNULL, timeout=GIT_SECONDS)
    except (OSError, subprocess.CalledProcessError):
        return None
    except subprocess.TimeoutExpired:
        raise InvalidInput(f"workdir {workdir}: git did not list its files in "
                           f"{GIT_SECONDS:g} s (an ignore file git waits on, or a file "
                           "system that does not answer)") from None
    names = {n.decode("utf-8", "surrogateescape") for n in listed.stdout.split(b"\0") if n}
    return sorted(names)


def _walk(workdir: Path, extra: list[ignore.Rule], strict: bool = True) -> Listing:
    """Every file the ignore files keep; `strict`: an entry that cannot be read is
    InvalidInput (else it is passed over)."""
    out: list[str] = []
    skipped: list[str] = []

    def visit(folder: Path, rel: str, rules: list[ignore.Rule]) -> None:
        here = _read_rules(folder / ".gitignore", rel)
        # .costschedignore is applied last, so that it can exclude what .gitignore keeps
        scoped = [r for r in rules if r not in extra] + here + extra
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            if not strict:
                return
            raise unreadable(folder, exc) from None
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except FileNotFoundError:
                continue  # removed since the folder was listed
            except OSError as exc:
                if not strict:
                    continue
                raise unreadable(entry.path, exc) from None
            is_dir = stat.S_ISDIR(mode)
            if entry.name == ".git" or ignore.ignored(scoped, path, is_dir):
                continue
            if is_dir:
                visit(Path(entry.path), path, scoped)
            elif stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                out.append(path)
            else:
                skipped.append(f"{path} ({kind(mode)})")

    visit(workdir, "", list(extra))
    return Listing(out, skipped)
