"""A job's checkpoint directory as the agent sees it: what one look finds there (`look`:
its complete files, its links kept, its temporary files), and a version restored into it
(`restore`), every file in its subfolder.

Symbolic links: a relative one that stays inside the directory (`latest` ->
`ckpt-000450.pkl`) is published as a link and restored as one (launchers.checkpoint_links);
any other is left out, never followed (said once in the log)."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from costsched.restored import DAMAGED, IN_PROGRESS, Restored, Skipped
from launchers import checkpoint_links
from launchers.checkpoint_links import LINKS
from launchers.checkpoints import CheckpointStore, CorruptCheckpoint
from launchers.file_identity import file_id
from launchers.in_progress import hidden, in_progress, saves_in_progress, uncommitted
from launchers.settle_words import COMMIT

log = logging.getLogger("costsched.agent")

_noted: set[str] = set()  # symbolic links said once in the log

def restore(store: CheckpointStore, dest: Path, at_most: int | None = None) -> Restored:
    """The newest version (at most `at_most`) that verifies and fetches intact, every file
    of it, into dest, each in its subfolder (complete files there that it does not hold are
    removed, a save left in progress there too, and folders left empty: the directory is
    that checkpoint): its version (None: none), with the newer ones skipped and why (its
    step is the caller's to say). A file of it whose path is a write in progress
    (`launchers.in_progress`: a version an older agent published with an Orbax
    `600.orbax-checkpoint-tmp-<n>/` in it, or a DCP save without its `.metadata`) is not
    brought back, and a version of nothing else is no checkpoint: skipped."""
    skipped: list[Skipped] = []
    for checkpoint in reversed(store.list()):
        if at_most is not None and checkpoint.version > at_most:
            continue
        held = saves_in_progress(p.name for p in checkpoint.parts if p.name != LINKS)
        parts = [p for p in checkpoint.parts if p.name not in held]
        if not any(p.name != LINKS for p in parts):
            log.warning("checkpoint version %d holds only a save in progress (%s): skipped",
                        checkpoint.version, checkpoint.describe())
            skipped.append(Skipped(checkpoint.version, IN_PROGRESS))
            continue
        if not store.verify(checkpoint):
            log.warning("checkpoint version %d does not verify: skipped", checkpoint.version)
            skipped.append(Skipped(checkpoint.version, DAMAGED))
            continue
        try:
            _make_room(dest, [p.name for p in parts])
            for part in parts:
                store.fetch_part(part, dest)
        except CorruptCheckpoint as exc:
            log.warning("%s: skipped", exc)
            skipped.append(Skipped(checkpoint.version, DAMAGED))
            continue
        if len(parts) < len(checkpoint.parts):
            log.warning("checkpoint version %d: %s left out (a save in progress when it "
                        "was published)", checkpoint.version,
                        ", ".join(p.name for p in checkpoint.parts if p not in parts))
        names = {p.name for p in parts}
        there = look(dest)
        for stale in set(there.complete) - names:
            (dest / stale).unlink(missing_ok=True)
        for link in there.links:
            (dest / link).unlink(missing_ok=True)
        _clear_saves_in_progress(dest)
        if LINKS in names:  # its links, made again as links
            checkpoint_links.restore(dest)
        (dest / LINKS).unlink(missing_ok=True)
        _drop_empty_folders(dest)
        if COMMIT in names:  # the set is committed as restored: the marker newest of all
            os.utime(dest / COMMIT)
        log.info("restored checkpoint version %d (%s)", checkpoint.version,
                 checkpoint.describe())
        return Restored(checkpoint.version, tuple(skipped))
    return Restored(None, tuple(skipped))


def _clear_saves_in_progress(directory: Path) -> None:
    """Every save left in progress in `directory` (a folder or file named as one, not
    hidden: `600.orbax-checkpoint-tmp-<n>/` of a run that was stopped mid-save; a DCP
    save's folder without its `.metadata`, its files) removed: a restored checkpoint holds
    none."""
    files = []
    for top, folders, names in os.walk(directory):
        here = Path(top).relative_to(directory)
        for name in list(folders):
            rel = (here / name).as_posix()
            if in_progress(rel) and not hidden(rel):
                folders.remove(name)
                path = Path(top, name)
                if path.is_symlink():
                    path.unlink(missing_ok=True)
                else:
                    shutil.rmtree(path, ignore_errors=True)
        for name in names:
            rel = (here / name).as_posix()
            if in_progress(rel) and not hidden(rel):
                Path(top, name).unlink(missing_ok=True)
            elif not hidden(rel):
                files.append(rel)
    for rel in uncommitted(files):
        (directory / rel).unlink(missing_ok=True)


def _make_room(dest: Path, names: list[str]) -> None:
    """What is in the way of the version's files in dest, removed: a file or link where it
    has a folder ('latest' where it has 'latest/state.json'), a folder where it has a file."""
    for name in names:
        parts = name.split("/")
        for end in range(1, len(parts)):
            there = dest.joinpath(*parts[:end])
            if there.is_symlink() or there.is_file():
                there.unlink()
        there = dest / name
        if there.is_dir() and not there.is_symlink():
            shutil.rmtree(there)


@dataclass(frozen=True)
class Look:
    """The checkpoint directory at one look: its complete files (path below it -> stat),
    its links kept (path -> target, `launchers.checkpoint_links`), what every regular file
    and link, temp ones included, was then (the settle rule's), and whether none was a
    temp one (`tidy`); each complete file's (size, mtime_ns, file id): what tells it
    changed, and renamed in or not, between two looks (`launchers.file_identity`)."""

    complete: dict[str, os.stat_result]
    signature: frozenset[tuple[str, int, int, int]]  # (path, size, mtime_ns, file id)
    links: dict[str, str]
    tidy: bool
    states: dict[str, tuple[int, int, int]]


def look(directory: Path) -> Look:
    """Every regular file and link under `directory`, links not followed (one leading
    outside it, or absolute: left out, said once). Complete: its path is no write in
    progress (`launchers.in_progress`: no part of it hidden, nor named as a temporary save:
    "x.tmp...", "ckpt.tmp/", "latest.tmp-link", Orbax's "600.orbax-checkpoint-tmp-<n>/",
    "tmp-checkpoint-600/"), nor in a DCP save not committed yet (`uncommitted`)."""
    complete: dict[str, os.stat_result] = {}
    states: dict[str, tuple[int, int, int]] = {}
    links: dict[str, str] = {}
    every, tidy = [], True
    for top, folders, names in os.walk(directory):
        here = Path(top).relative_to(directory)
        for name in [*folders, *names]:
            rel = (here / name).as_posix()
            try:
                info = os.lstat(Path(top, name))
                target = os.readlink(Path(top, name)) if stat.S_ISLNK(info.st_mode) else ""
            except (FileNotFoundError, OSError):  # gone since the listing
                continue
            whole = not in_progress(rel)
            if stat.S_ISLNK(info.st_mode) and hidden(rel):
                continue  # a hidden link: never the job's checkpoint, nor a save under way
            if stat.S_ISLNK(info.st_mode) and whole and not checkpoint_links.kept(rel, target):
                _note_link(rel, target)
                continue
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                continue
            file = info.st_ino if stat.S_ISLNK(info.st_mode) else file_id(Path(top, name),
                                                                          info)
            every.append((rel, info.st_size, info.st_mtime_ns, file))
            tidy = tidy and whole
            if whole and stat.S_ISLNK(info.st_mode):
                links[rel] = target
            elif whole:
                complete[rel] = info
                states[rel] = (info.st_size, info.st_mtime_ns, file)
    for rel in uncommitted(complete):  # a DCP save under way: its `.metadata` not there yet
        del complete[rel], states[rel]
        tidy = False
    return Look(complete, frozenset(every), links, tidy, states)


def _note_link(rel: str, target: str) -> None:
    if rel not in _noted:
        _noted.add(rel)
        log.warning("checkpoint: %s is a symbolic link to %s, outside the checkpoint "
                    "directory: left out, never followed (write the file itself, or a "
                    "relative link to a file in the directory)", rel, target)


def _drop_empty_folders(directory: Path) -> None:
    for top, _, _ in sorted(os.walk(directory), reverse=True):  # deepest first
        if Path(top) != directory and not Path(top).is_symlink():
            with contextlib.suppress(OSError):  # not empty
                os.rmdir(top)
