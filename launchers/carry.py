"""Carrying a job's checkpoints into another store (another cloud's) before its next
instance starts there: the job's code archive, then its newest verified checkpoint version,
streamed (`CheckpointStore.copy_in`: verified against its manifest on the way, committed by
its manifest), so that the instance reads its own cloud's store with its own identity.

Once: a version whose manifest (name, size, SHA-256) is the target's newest already is not
copied again (a costsched that stopped between the copy and the launch carries on), nor is a
code archive the target holds. A version that is not its manifest's on the way is skipped
for the next older one, as a restore would skip it.

    carry("s3://b/jobs/job-7", "az://ckpt/jobs/job-7", code=("<sha256>", 1234))
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from costsched.migration.launcher import CarryError
from costsched.redact import redact
from launchers.checkpoints import Checkpoint, CheckpointStore, CorruptCheckpoint, open_store

log = logging.getLogger("costsched.carry")


def carry(source_uri: str, target_uri: str, *, code: tuple[str, int] | None = None,
          tick: Callable[[int], None] | None = None) -> str:
    """Copy the job's code archive (`code`: its SHA-256 and size; None: the job has none)
    and newest verified checkpoint from `source_uri` into `target_uri`, each unless it is
    there already; what was done, in one line. `tick(bytes)` is called as the checkpoint's
    chunks go through (and may raise to stop the copy). CarryError, one line, when it
    cannot be done: nothing is committed to the target, nothing changes at the source."""
    try:
        target = open_store(target_uri)
        target.check()  # a container or bucket that is not there, said in one line
        if code is not None:
            from launchers.codepack import archive_uri
            from launchers.codepack import carry as carry_code

            carry_code(archive_uri(source_uri, code[0]), code[0], code[1], target_uri)
        return _carry_newest(open_store(source_uri), target, tick)
    except CarryError:
        raise
    except Exception as exc:  # noqa: BLE001 - a store's or an SDK's error, said in one line
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # no XML, no ids
        raise CarryError(redact(f"cannot copy the checkpoints of {source_uri} to "
                                f"{target_uri}: {why}")) from None


def _carry_newest(source: CheckpointStore, target: CheckpointStore,
                  tick: Callable[[int], None] | None) -> str:
    there = target.list()
    newest = there[-1] if there else None
    skipped = []
    for checkpoint in reversed(source.list()):
        if newest is not None and _same(newest, checkpoint):
            return (f"checkpoint version {checkpoint.version} is in {target.uri} already "
                    f"(version {newest.version})")
        try:
            copied = target.copy_in(_Ticking(source, tick), checkpoint)  # type: ignore[arg-type]
        except CorruptCheckpoint as exc:
            log.warning("%s: not copied: %s", source.uri, exc)
            skipped.append(str(checkpoint.version))
            continue
        return (f"copied checkpoint version {checkpoint.version} ({_size(checkpoint.size)}) "
                f"from {source.uri} to {target.uri} (version {copied.version})")
    if skipped:
        raise CarryError(f"no checkpoint of {source.uri} is its manifest's (versions "
                         f"{', '.join(skipped)}): none copied to {target.uri}")
    return f"no checkpoint yet in {source.uri}: nothing to copy to {target.uri}"


def _same(a: Checkpoint, b: Checkpoint) -> bool:
    return (a.name, a.size, a.sha256) == (b.name, b.size, b.sha256)


def _size(size: int) -> str:
    return f"{size / 1e9:.2f} GB" if size >= 1e8 else f"{size / 1e6:.1f} MB"


class _Ticking:
    """`source` as `copy_in` reads it, `tick` told of each chunk."""

    def __init__(self, source: CheckpointStore, tick: Callable[[int], None] | None) -> None:
        self.source, self.tick, self.uri = source, tick, source.uri

    def chunks(self, checkpoint: Checkpoint) -> Iterator[bytes]:
        for chunk in self.source.chunks(checkpoint):
            if self.tick is not None:
                self.tick(len(chunk))
            yield chunk

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)
