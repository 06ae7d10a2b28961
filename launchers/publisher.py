"""A job's checkpoints between its instance and its checkpoint store: the newest verified
version restored at start (every file of it, in its subfolders), and the directory's
complete tree of files published as the next version once it is whole (files that did not
change named by it, not uploaded again; the last KEEP versions kept).

When a set is whole. A job writes a checkpoint of several files one after another (weights,
then the optimizer state): a version taken between the two would hold new weights with old
optimizer state, and a hard preemption would restore that mix. So a new version is
published only when the job's set is whole:
- with the commit marker (COMMIT, at the top of the directory): the job touches it once every
  file of a set is written; a version is published while the marker is at least as new as
  every other file, never otherwise (once a marker was seen, a missing one means "not
  whole": a job may delete it before a save). No wait: a large or slow set is published as
  soon as it is committed. The marker may hold the step saved: the version's step then
  (`said_step`; launchers.progress_readings.saved_step);
- else once the directory has stopped changing: no file's (size, mtime), temp files
  included, changed between looks for the settle period (SETTLE seconds, the job's
  $COSTSCHED_CHECKPOINT_SETTLE_SECONDS; 0: no wait). A directory of one complete file and
  nothing else is published at once: a file renamed into place is whole by itself;
- else, with no wait, when the job saves each checkpoint as new files under new names and
  deletes older ones (`ckpt-000650.npz`, renamed into place; the newest few kept): when the
  change since the last version only adds files under names it did not hold (and removes
  others), no temp file was there at this look or the one before, and the job was never
  seen changing a complete file between two looks (a file renamed over one of the same
  name, or written in place and seen growing: the settle rule is its from then on), the
  files that stayed unchanged since the last look are published (`_settled_new_names`);
  one added since waits for the next look (one look of patience: a file written in place
  without a rename is not taken half-written). Not covered: a save of several new files
  (a look between their renames could take one without the other: the marker is for it),
  and a file the job deletes before two looks have seen it;
- once the job has exited (`final`), at once: a job writes its checkpoint on SIGTERM, then
  exits, so the directory is complete (the marker, when the job uses one, is still its word).
Until then the previous version stays the one restored. A settle wait that does not end
(the job saves again before its directory settles) is said in the status after 3 settle
periods, with the fix; a wait for the marker after _PATIENCE s (a large set takes time).

Symbolic links are left out (with a note in the log): a link may lead anywhere (a dataset, a
folder above), and a version holds the job's regular files only.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import shutil
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from launchers.checkpoints import Checkpoint, CheckpointStore, CorruptCheckpoint
from launchers.progress_readings import named_step, saved_step

log = logging.getLogger("costsched.agent")

KEEP = 3  # checkpoint versions kept in the store
COMMIT = "COSTSCHED_COMMIT"  # the job's commit marker: its set of files is whole
SETTLE = 10.0  # seconds the directory stays unchanged before a set without a marker is taken
ENV_SETTLE = "COSTSCHED_CHECKPOINT_SETTLE_SECONDS"
_PATIENCE = 120.0  # seconds a set may wait before the wait is said in the status
_STAGING = ".publishing"  # hard links of the files being published, beside the checkpoints
_noted: set[str] = set()  # symbolic links said once in the log


def settle_seconds(environ: Mapping[str, str] = os.environ) -> float:
    """The settle period the job asks for ($COSTSCHED_CHECKPOINT_SETTLE_SECONDS), else
    SETTLE; a value that is not seconds >= 0 is said in the log and SETTLE used."""
    raw = environ.get(ENV_SETTLE, "").strip()
    if not raw:
        return SETTLE
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        log.warning("%s=%r: expected seconds >= 0 (0: no wait); %g s used", ENV_SETTLE, raw,
                    SETTLE)
        return SETTLE
    return value


def restore(store: CheckpointStore, dest: Path, at_most: int | None = None) -> int | None:
    """The newest version (at most `at_most`) that verifies and fetches intact, every file
    of it, into dest, each in its subfolder (complete files there that it does not hold are
    removed, and folders left empty: the directory is that checkpoint); its version."""
    for checkpoint in reversed(store.list()):
        if at_most is not None and checkpoint.version > at_most:
            continue
        if not store.verify(checkpoint):
            log.warning("checkpoint version %d does not verify: skipped", checkpoint.version)
            continue
        try:
            _make_room(dest, [p.name for p in checkpoint.parts])
            store.fetch(checkpoint, dest)
        except CorruptCheckpoint as exc:
            log.warning("%s: skipped", exc)
            continue
        names = {p.name for p in checkpoint.parts}
        for stale in set(look(dest).complete) - names:
            (dest / stale).unlink(missing_ok=True)
        _drop_empty_folders(dest)
        if COMMIT in names:  # the set is committed as restored: the marker newest of all
            os.utime(dest / COMMIT)
        log.info("restored checkpoint version %d (%s)", checkpoint.version,
                 checkpoint.describe())
        return checkpoint.version
    return None


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
    and what every regular file, temp files included, was then (the settle rule's)."""

    complete: dict[str, os.stat_result]
    signature: frozenset[tuple[str, int, int, int]]  # (path, size, mtime_ns, inode)


def look(directory: Path) -> Look:
    """Every regular file under `directory`, links not followed. Complete: no part of its
    path starts with '.' (fetches in progress, hidden files) or contains '.tmp' (a job
    writes "x.tmp..." and renames it; a folder "ckpt.tmp/" renamed when done)."""
    complete: dict[str, os.stat_result] = {}
    every = []
    for top, folders, names in os.walk(directory):
        here = Path(top).relative_to(directory)
        for name in [*folders, *names]:
            rel = (here / name).as_posix()
            try:
                info = os.lstat(Path(top, name))
            except FileNotFoundError:  # gone since the listing
                continue
            if stat.S_ISLNK(info.st_mode):
                _note_link(rel)
            if not stat.S_ISREG(info.st_mode):
                continue
            every.append((rel, info.st_size, info.st_mtime_ns, info.st_ino))
            parts = rel.split("/")
            if not any(p.startswith(".") or ".tmp" in p for p in parts):
                complete[rel] = info
    return Look(complete, frozenset(every))


def _note_link(rel: str) -> None:
    if rel not in _noted and not any(p.startswith(".") for p in rel.split("/")):
        _noted.add(rel)
        log.info("checkpoint: %s is a symbolic link: left out (a checkpoint holds the "
                 "job's regular files)", rel)


def _drop_empty_folders(directory: Path) -> None:
    for top, _, _ in sorted(os.walk(directory), reverse=True):  # deepest first
        if Path(top) != directory and not Path(top).is_symlink():
            with contextlib.suppress(OSError):  # not empty
                os.rmdir(top)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class Publisher:
    """Publishes the checkpoint directory as a new version when a complete file changed and
    the set is whole (the module's doc). `clock`: monotonic seconds (a test's own)."""

    def __init__(self, store: CheckpointStore, directory: Path, keep: int = KEEP,
                 settle: float = SETTLE, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self.store, self.directory, self.keep = store, directory, keep
        self.settle, self.clock = settle, clock
        self.staging = directory.parent / _STAGING
        self.version: int | None = None  # newest version published or restored
        self.error = ""  # why the last publish failed, or why a set waits long ('' else)
        self.enabled = True  # False: never publishes (a gang's node other than rank 0)
        self._seen: dict[str, tuple[int, int, str]] = {}  # name -> (size, mtime_ns, sha256)
        self._last: Checkpoint | None = None  # the version `version` names
        self.written_ns = 0  # when the newest file new in the last version published was
        self.said_step: int | None = None  # the step its marker holds (None: no step in it)
        self.named_step: int | None = None  # the step its new files are named by (or None)
        self._marked = False  # the job commits its sets with the marker
        self._signature: frozenset | None = None  # the directory at the last look...
        self._still_since = 0.0  # ...unchanged since then (clock)
        self._waiting_since: float | None = None  # a changed set not published since then
        self._before: dict[str, tuple[int, int, int]] | None = None  # complete files, and
        self._tidy_before = False  # no temp file, at the last look
        self._in_place = False  # the job was seen changing a complete file between looks
        self._saves_waiting = 0  # looks that found complete files changed, while waiting

    def remember_all(self) -> None:
        """Take the files there now as published: version `version`'s (after a restore)."""
        self._last = None
        if self.version is not None:
            self._last = next((c for c in self.store.list() if c.version == self.version),
                              None)
        for rel, info in look(self.directory).complete.items():
            self._seen[rel] = (info.st_size, info.st_mtime_ns, _sha256(self.directory / rel))
        self.said_step = saved_step(self.directory / COMMIT) if self.version is not None \
            else None

    def based_on(self, checkpoint: Checkpoint) -> None:
        """Take the files of `checkpoint` (in the store) as published already: a file there
        with the same content is named by the next version, not uploaded again."""
        self._last = checkpoint
        for part in checkpoint.parts:
            self._seen[part.name] = (-1, -1, part.sha256)  # size and time never match

    def publish_changed(self, final: bool = False) -> int:
        """When a complete file changed and the set is whole (`final`: the job has exited,
        no settle wait), publish the directory's files as the next version, then prune; 1
        when published, else 0. A publish that fails is tried again once the store is
        pruned to its newest verified version (a full store frees room that way), else at
        the next call; `error` says why until a publish succeeds. Nothing when not
        `enabled` (a gang's node other than rank 0)."""
        if not self.enabled:
            return 0
        try:
            published, waiting = self._publish(final)
        except Exception as exc:  # noqa: BLE001 - a store error must not end the job
            log.error("publishing the checkpoint failed: %s", exc)
            if not self._prune(1):
                self.error = f"publishing the checkpoint failed: {exc}"
                return 0
            try:
                published, waiting = self._publish(final)
            except Exception as again:  # noqa: BLE001
                self.error = f"publishing the checkpoint failed: {again}"
                log.error("%s (after pruning)", self.error)
                return 0
        self.error = waiting
        if published:
            self._prune(self.keep)
        return published

    def _prune(self, keep: int) -> bool:
        try:
            self.store.prune(keep)
            return True
        except Exception as exc:  # noqa: BLE001
            log.error("pruning the checkpoint store failed: %s", exc)
            return False

    def _whole(self, seen: Look, final: bool, now: float) -> str:
        """'' when the set `seen` is whole (the module's doc), else what it waits for; the
        new-names rule is `_settled_new_names`'s."""
        marker = seen.complete.get(COMMIT)
        self._marked = self._marked or marker is not None
        if self._marked:
            newest = max((i.st_mtime_ns for n, i in seen.complete.items() if n != COMMIT),
                         default=0)
            if marker is not None and marker.st_mtime_ns >= newest:
                return ""
            return (f"{COMMIT} is missing or older than the files it commits (touch it "
                    "once every file of a save is written)")
        if final or self.settle <= 0 or (len(seen.complete) == len(seen.signature) == 1):
            return ""
        if now - self._still_since >= self.settle:
            return ""
        return (f"the directory has not stayed unchanged for {self.settle:g} s: the job "
                f"saves again before it does (touch {COMMIT} after each save for it to be "
                f"published at once, or set {ENV_SETTLE} below the time between saves)")

    def _settled_new_names(self, seen: Look, before: dict[str, tuple[int, int, int]] | None,
                           tidy_before: bool, changed: list[str]) -> set[str] | None:
        """The new-names rule (the module's doc): the complete files that stayed unchanged
        since the last look, when the change only adds files under new names (and removes
        others) and no temp file was there at either look; else None."""
        if self._marked or self._in_place or before is None or not tidy_before \
                or len(seen.complete) != len(seen.signature):
            return None
        if any(n in self._seen for n in changed):  # a name published before, rewritten
            return None
        stable = {n for n, i in seen.complete.items()
                  if before.get(n) == (i.st_size, i.st_mtime_ns, i.st_ino)}
        return stable if stable & set(changed) else None

    def _waits(self, why: str, now: float) -> str:
        """What the status says of a set that waits: a settle wait once 3 settle periods
        passed with the complete files changed again and again (the job saves before its
        directory settles: a single large file still being written is not said), a wait for
        the marker or a slow save after _PATIENCE s (a large set may take minutes)."""
        if self._waiting_since is None:
            self._waiting_since, self._saves_waiting = now, 0
        waited = now - self._waiting_since
        again = not self._marked and self._saves_waiting >= 3
        if waited < (3 * self.settle if again else _PATIENCE):
            return ""
        return f"nothing published for {waited:,.0f} s: {why}"

    def _publish(self, final: bool) -> tuple[int, str]:
        """(1 when a version was published, else 0; what a set waits for, said in `error`)."""
        now = self.clock()
        seen = look(self.directory)
        if seen.signature != self._signature:
            self._signature, self._still_since = seen.signature, now
        paths = seen.complete
        before, tidy_before = self._before, self._tidy_before
        self._before = {n: (i.st_size, i.st_mtime_ns, i.st_ino) for n, i in paths.items()}
        self._tidy_before = len(paths) == len(seen.signature)
        self._in_place = self._in_place or before is not None and any(
            n in before and before[n] != self._before[n] for n in paths)
        self._saves_waiting += before != self._before
        changed = [n for n, i in paths.items() if (was := self._seen.get(n)) is None
                   or was[:2] != (i.st_size, i.st_mtime_ns)]
        if not changed or set(paths) == {COMMIT}:  # (a marker alone: a job's first touch)
            self._marked = self._marked or COMMIT in paths
            self._waiting_since = None
            return 0, ""
        why = self._whole(seen, final, now)
        if why:
            settled = self._settled_new_names(seen, before, tidy_before, changed)
            if settled is None:
                return 0, self._waits(why, now)
            paths = {n: paths[n] for n in settled}  # those added since: the next version's
            changed = [n for n in changed if n in settled]
        held = {p.name: p for p in self._base_parts()}
        staged: dict[str, Path] = {}
        try:
            # hard links pin these versions of the files while the job may rename newer in
            for n in paths:
                if n in changed or n not in held or held[n].sha256 != self._seen[n][2]:
                    staged[n] = self._stage(n)
            if any(_moved(self.directory / n, paths[n]) for n in staged):
                self._signature = None  # a file changed as it was staged: not whole yet
                return 0, ""
            shas: dict[str, tuple[int, int, str]] = {}
            for name, path in staged.items():
                info = path.stat()
                shas[name] = (info.st_size, info.st_mtime_ns, _sha256(path))
            said = saved_step(self.staging / COMMIT if COMMIT in staged
                              else self.directory / COMMIT) if COMMIT in paths else None
            if any(_rewritten(path, paths[name]) for name, path in staged.items()):
                self._signature = None  # written again in place as it was read: not whole
                return 0, ""
            if all(shas[n][2] == self._seen.get(n, (0, 0, ""))[2] for n in changed):
                self._seen.update((n, shas[n]) for n in changed)  # touched, same content
                self._waiting_since = None
                return 0, ""
            # a file whose bytes the version it builds on holds is named, not uploaded
            new = {n: path for n, path in staged.items()
                   if n not in held or held[n].sha256 != shas[n][2]}
            carried = [held[n] for n in paths if n not in new and n in held]
            checkpoint = self.store.publish_files(new, carried)
        finally:
            shutil.rmtree(self.staging, ignore_errors=True)
        stored = {p.name: p.sha256 for p in checkpoint.parts}
        for name in staged:
            if stored.get(name) == shas[name][2]:
                self._seen[name] = shas[name]
            else:
                log.error("%s changed while checkpoint version %d was published: "
                          "published again next", name, checkpoint.version)
        self._last = checkpoint
        self.version = checkpoint.version
        self.written_ns = max(shas[name][1] for name in new)
        self.said_step = said
        self.named_step = named_step(new)
        self._waiting_since = None
        log.info("published checkpoint version %d: %s (%d bytes, %d new)",
                 checkpoint.version, checkpoint.describe(), checkpoint.size, len(new))
        return 1, ""

    def _base_parts(self) -> tuple[Checkpoint, ...]:
        """The files of the version this one builds on, while the store still lists it (a
        second publisher, as during a move's overlap, may have pruned it: then every file
        is uploaded again rather than named where its bytes may be gone)."""
        if self._last is None:
            return ()
        if all(c.version != self._last.version for c in self.store.list()):
            log.info("checkpoint version %d is no longer in the store: every file is "
                     "published again", self._last.version)
            self._last = None
            return ()
        return self._last.parts

    def _stage(self, name: str) -> Path:
        """A hard link to the file (a copy where links cannot be made); a file renamed over
        or removed since the look is found out by `_moved`."""
        staged = self.staging / name
        staged.parent.mkdir(parents=True, exist_ok=True)
        staged.unlink(missing_ok=True)
        try:
            os.link(self.directory / name, staged)
        except FileNotFoundError:
            pass
        except OSError:  # no hard links here: a copy does the same, slower
            with contextlib.suppress(FileNotFoundError):
                shutil.copy2(self.directory / name, staged)
        return staged


def _rewritten(staged: Path, was: os.stat_result) -> bool:
    """Whether the staged file (a hard link, or a copy keeping its time) is no longer what
    the look saw: written again in place (as a marker may be) while it was read."""
    now = staged.stat()
    return (now.st_size, now.st_mtime_ns) != (was.st_size, was.st_mtime_ns)


def _moved(path: Path, was: os.stat_result) -> bool:
    """Whether `path` is no longer the file it was at the look (renamed over, rewritten)."""
    try:
        now = path.stat()
    except FileNotFoundError:
        return True
    return (now.st_size, now.st_mtime_ns, now.st_ino) != (was.st_size, was.st_mtime_ns,
                                                         was.st_ino)
