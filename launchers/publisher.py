"""A job's checkpoints between its instance and its checkpoint store: the newest verified
version restored at start (every file of it), and, when a complete file changed, the
directory's complete set of files published as the next version (files that did not change
named by it, not uploaded again; the last KEEP versions kept)."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from pathlib import Path

from launchers.checkpoints import Checkpoint, CheckpointStore, CorruptCheckpoint

log = logging.getLogger("costsched.agent")

KEEP = 3  # checkpoint versions kept in the store
_STAGING = ".publishing"  # hard links of the files being published, beside the checkpoints


def restore(store: CheckpointStore, dest: Path, at_most: int | None = None) -> int | None:
    """The newest version (at most `at_most`) that verifies and fetches intact, every file
    of it, into dest (complete files there that it does not hold are removed: the directory
    is that checkpoint); its version."""
    for checkpoint in reversed(store.list()):
        if at_most is not None and checkpoint.version > at_most:
            continue
        if not store.verify(checkpoint):
            log.warning("checkpoint version %d does not verify: skipped", checkpoint.version)
            continue
        try:
            store.fetch(checkpoint, dest)
        except CorruptCheckpoint as exc:
            log.warning("%s: skipped", exc)
            continue
        names = {p.name for p in checkpoint.parts}
        for stale in _complete_files(dest):
            if stale.name not in names:
                stale.unlink(missing_ok=True)
        log.info("restored checkpoint version %d (%s)", checkpoint.version,
                 checkpoint.describe())
        return checkpoint.version
    return None


def _complete_files(directory: Path) -> list[Path]:
    # complete files only: jobs write "x.tmp..." and rename; dot files are fetches
    try:
        paths = sorted(directory.iterdir())
    except FileNotFoundError:
        return []
    return [p for p in paths if ".tmp" not in p.name and not p.name.startswith(".")
            and p.is_file()]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class Publisher:
    """Publishes the checkpoint directory as a new version when a complete file changed."""

    def __init__(self, store: CheckpointStore, directory: Path, keep: int = KEEP) -> None:
        self.store, self.directory, self.keep = store, directory, keep
        self.staging = directory.parent / _STAGING
        self.version: int | None = None  # newest version published or restored
        self.error = ""  # why the last publish failed ('' once one succeeds)
        self.enabled = True  # False: never publishes (a gang's node other than rank 0)
        self._seen: dict[str, tuple[int, int, str]] = {}  # name -> (size, mtime_ns, sha256)
        self._last: Checkpoint | None = None  # the version `version` names
        self.written_ns = 0  # when the newest file new in the last version published was

    def remember_all(self) -> None:
        """Take the files there now as published: version `version`'s (after a restore)."""
        self._last = None
        if self.version is not None:
            self._last = next((c for c in self.store.list() if c.version == self.version),
                              None)
        for path in _complete_files(self.directory):
            stat = path.stat()
            self._seen[path.name] = (stat.st_size, stat.st_mtime_ns, _sha256(path))

    def based_on(self, checkpoint: Checkpoint) -> None:
        """Take the files of `checkpoint` (in the store) as published already: a file there
        with the same content is named by the next version, not uploaded again."""
        self._last = checkpoint
        for part in checkpoint.parts:
            self._seen[part.name] = (-1, -1, part.sha256)  # size and time never match

    def publish_changed(self) -> int:
        """When a complete file changed, publish the directory's files as the next version,
        then prune; 1 when published, else 0. A publish that fails is tried again once
        the store is pruned to its newest verified version (a full store frees room that
        way), else at the next call; `error` says why until a publish succeeds. Nothing
        when not `enabled` (a gang's node other than rank 0)."""
        if not self.enabled:
            return 0
        try:
            published = self._publish()
        except Exception as exc:  # noqa: BLE001 - a store error must not end the job
            log.error("publishing the checkpoint failed: %s", exc)
            if not self._prune(1):
                self.error = f"publishing the checkpoint failed: {exc}"
                return 0
            try:
                published = self._publish()
            except Exception as again:  # noqa: BLE001
                self.error = f"publishing the checkpoint failed: {again}"
                log.error("%s (after pruning)", self.error)
                return 0
        self.error = ""
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

    def _publish(self) -> int:
        paths = _complete_files(self.directory)
        stats = {p.name: p.stat() for p in paths}
        changed = [p for p in paths if (seen := self._seen.get(p.name)) is None
                   or seen[:2] != (stats[p.name].st_size, stats[p.name].st_mtime_ns)]
        if not changed:
            return 0
        # hard links pin these versions of the files while the job may rename newer ones in
        staged = {p.name: self._stage(p) for p in changed}
        try:
            new: dict[str, Path] = {}
            shas: dict[str, tuple[int, int, str]] = {}
            for name, path in staged.items():
                stat = path.stat()
                shas[name] = (stat.st_size, stat.st_mtime_ns, _sha256(path))
                seen = self._seen.get(name)
                if seen is None or seen[2] != shas[name][2]:
                    new[name] = path
                else:
                    self._seen[name] = shas[name]  # touched, same content
            if not new:
                return 0
            held = {p.name: p for p in self._base_parts()}
            carried = []
            for path in paths:
                part = held.get(path.name)
                if path.name in new:
                    continue
                if part is not None and part.sha256 == self._seen[path.name][2]:
                    carried.append(part)
                else:  # not in the version it builds on: uploaded with the rest
                    new[path.name] = self._stage(path)
                    stat = new[path.name].stat()
                    shas[path.name] = (stat.st_size, stat.st_mtime_ns,
                                       _sha256(new[path.name]))
            checkpoint = self.store.publish_files(new, carried)
        finally:
            for path in staged.values():
                path.unlink(missing_ok=True)
            shutil.rmtree(self.staging, ignore_errors=True)
        stored = {p.name: p.sha256 for p in checkpoint.parts}
        for name in new:
            if stored.get(name) == shas[name][2]:
                self._seen[name] = shas[name]
            else:
                log.error("%s changed while checkpoint version %d was published: "
                          "published again next", name, checkpoint.version)
        self._last = checkpoint
        self.version = checkpoint.version
        self.written_ns = max(shas[name][1] for name in new)
        log.info("published checkpoint version %d: %s (%d bytes, %d new)",
                 checkpoint.version, checkpoint.describe(), checkpoint.size, len(new))
        return 1

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

    def _stage(self, path: Path) -> Path:
        self.staging.mkdir(exist_ok=True)
        staged = self.staging / path.name
        staged.unlink(missing_ok=True)
        try:
            os.link(path, staged)
        except OSError:  # no hard links here: a copy does the same, slower
            shutil.copy2(path, staged)
        return staged
