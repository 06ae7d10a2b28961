"""A job's checkpoints between its instance and its checkpoint store: the newest verified
version restored at start, every complete file that changed published (the last KEEP
versions kept)."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from pathlib import Path

from launchers.checkpoints import CheckpointStore, CorruptCheckpoint

log = logging.getLogger("costsched.agent")

KEEP = 3  # checkpoint versions kept in the store
_STAGING = ".publishing"  # hard links of the files being published, beside the checkpoints


def restore(store: CheckpointStore, dest: Path, at_most: int | None = None) -> int | None:
    """The newest version (at most `at_most`) that verifies and fetches intact, into dest;
    its version."""
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
        log.info("restored checkpoint version %d (%s)", checkpoint.version, checkpoint.name)
        return checkpoint.version
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class Publisher:
    """Publishes the files of a checkpoint directory that changed since last published."""

    def __init__(self, store: CheckpointStore, directory: Path, keep: int = KEEP) -> None:
        self.store, self.directory, self.keep = store, directory, keep
        self.staging = directory.parent / _STAGING
        self.version: int | None = None  # newest version published or restored
        self.error = ""  # why the last publish failed ('' once one succeeds)
        self.enabled = True  # False: never publishes (a gang's node other than rank 0)
        self._seen: dict[str, tuple[int, int, str]] = {}  # name -> (size, mtime_ns, sha256)

    def remember_all(self) -> None:
        """Take the files there now as published (after a restore)."""
        for path in self._candidates():
            stat = path.stat()
            self._seen[path.name] = (stat.st_size, stat.st_mtime_ns, _sha256(path))

    def known(self, name: str, sha256: str) -> None:
        """Take `name` with this content as published already (it is in the store)."""
        self._seen[name] = (-1, -1, sha256)  # size and time never match: compared by content

    def publish_changed(self) -> int:
        """Publish each changed file, then prune; the number published. A file that fails
        is published again once the store is pruned to its newest verified version (a full
        store frees room that way), else retried at the next call; `error` says why until
        a publish succeeds. Nothing when not `enabled` (a gang's node other than rank 0)."""
        if not self.enabled:
            return 0
        published = 0
        for path in self._candidates():
            try:
                published += self._publish_one(path)
            except Exception as exc:  # noqa: BLE001 - a store error must not end the job
                log.error("publishing %s failed: %s", path.name, exc)
                if not self._prune(1):
                    self.error = f"publishing {path.name} failed: {exc}"
                    continue
                try:
                    published += self._publish_one(path)
                except Exception as again:  # noqa: BLE001
                    self.error = f"publishing {path.name} failed: {again}"
                    log.error("%s (after pruning)", self.error)
                    continue
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

    def _candidates(self) -> list[Path]:
        # complete files only: jobs write "x.tmp..." and rename; dot files are fetches
        try:
            paths = sorted(self.directory.iterdir())
        except FileNotFoundError:
            return []
        return [p for p in paths if ".tmp" not in p.name and not p.name.startswith(".")
                and p.is_file()]

    def _publish_one(self, path: Path) -> int:
        stat = path.stat()
        seen = self._seen.get(path.name)
        if seen is not None and seen[:2] == (stat.st_size, stat.st_mtime_ns):
            return 0
        # a hard link pins this version of the file while the job may rename a newer one in
        staged = self._stage(path)
        try:
            stat = staged.stat()
            sha = _sha256(staged)
            if seen is not None and seen[2] == sha:
                self._seen[path.name] = (stat.st_size, stat.st_mtime_ns, sha)
                return 0
            checkpoint = self.store.publish(staged, name=path.name)
        finally:
            staged.unlink(missing_ok=True)
        if checkpoint.sha256 != sha:
            log.error("checkpoint version %d of %s changed while published: republished next",
                      checkpoint.version, path.name)
            return 0
        self._seen[path.name] = (stat.st_size, stat.st_mtime_ns, sha)
        self.version = checkpoint.version
        log.info("published %s as version %d (%d bytes)", path.name, checkpoint.version,
                 checkpoint.size)
        return 1

    def _stage(self, path: Path) -> Path:
        self.staging.mkdir(exist_ok=True)
        staged = self.staging / path.name
        staged.unlink(missing_ok=True)
        try:
            os.link(path, staged)
        except OSError:  # no hard links here: a copy does the same, slower
            shutil.copy2(path, staged)
        return staged
