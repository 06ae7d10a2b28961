"""The step of the checkpoint a recovery restores, as the recovery says it. The next
instance's agent restores the newest version in the job's checkpoint store; the lost
instance said the step of the version it published last (`Instance.checkpoint_step`, of
`Instance.checkpoint_version`). A preemption that lands between its agent publishing a
version and its status (or heartbeat) saying that version's step leaves the instance's
word on an older version: the step of the version restored is then the one its agent kept
beside the checkpoints (`launchers.version_steps`), or not known, never the older one's."""

from __future__ import annotations

import logging
from typing import NamedTuple

log = logging.getLogger("costsched.jobs")


class Restored(NamedTuple):
    """The step of the version restored (None: not known), whether it was read off the time
    it was saved, and that version (None: the store was not read, or holds none)."""

    step: float | None
    inferred: bool
    version: int | None


def restored_step(checkpoint_uri: str, version: int, step: float,
                  inferred: bool) -> Restored:
    """The step of the newest version in the store at `checkpoint_uri`: `step` (its
    instance's word, of `version`; `inferred` as it said) when `version` is that one, else
    the one kept with that version, else not known. The instance's word stands where the
    store cannot be read now or lists no version."""
    from launchers import version_steps
    from launchers.checkpoints import open_store

    try:
        listed = open_store(checkpoint_uri).list()
    except Exception as exc:  # noqa: BLE001 - a store it cannot read now: its word stands
        log.debug("checkpoints of %s: %s", checkpoint_uri, exc)
        return Restored(step, inferred, None)
    if not listed:
        return Restored(step, inferred, None)
    newest = listed[-1].version
    if version == newest:
        return Restored(step, inferred, newest)
    kept, kept_inferred = version_steps.of(checkpoint_uri, newest)
    if kept is not None:
        return Restored(float(kept), kept_inferred, newest)
    return Restored(None, False, newest)
