"""What a pass sees of a running job's checkpoints: the newest version its store holds
(its size, what a move copies; when it was published) and, from its instance, the step the
job stands at with the step of the newest checkpoint its agent published (what a move made
now loses: `lost_work`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal, NamedTuple

from costsched.passes import memo

if TYPE_CHECKING:
    from costsched.migration.launcher import Launcher
    from launchers.checkpoints.version import Checkpoint


class Reported(NamedTuple):
    """What a running job's instance reports: the step the job stands at and the step of
    the newest checkpoint version its agent published (`Instance.step`,
    `Instance.checkpoint_step`; None: it reports none, as before anything is published);
    when the job wrote its step and how long the instance's setup took, where it says
    (`Instance.step_at`, `Instance.setup_seconds`: a reading stored of it is timed so)."""

    step: float
    checkpoint_step: float | None
    step_at: datetime | None = None
    setup_seconds: float | None = None


def reported_steps(launcher: Launcher, instance_ids: Sequence[str]) -> dict[str, Reported]:
    """Of `instance_ids`, each running instance that reports its job's step (with its
    newest checkpoint's where it reports one), asked in one call; none when they cannot be
    read now (a move is then priced from what the store holds of them)."""
    if not instance_ids:
        return {}
    try:
        found = launcher.statuses(list(dict.fromkeys(instance_ids)))
    except Exception:  # noqa: BLE001 - unread now: what a move loses is not known
        return {}
    return {i: Reported(float(s.step), None if s.checkpoint_step is None
                        else float(s.checkpoint_step), s.step_at, s.setup_seconds)
            for i, s in found.items() if s.state == "running" and s.step is not None}


def measured_checkpoint_gb(uri: str) -> float | None:
    """The size in GB of the job's newest published checkpoint (None: none yet, or its
    store cannot be read now); once per pass."""
    newest = newest_version(uri)
    return newest.size / 1e9 if newest else None


def newest_version(uri: str) -> Checkpoint | Literal[False] | None:
    """The newest version the job's checkpoint store holds (`launchers.checkpoints`; None:
    none, or no store; False: it cannot be read now), read once per pass."""
    if not uri:
        return None

    def read() -> Checkpoint | Literal[False] | None:
        from launchers.checkpoints import open_store

        try:
            found = open_store(uri).list()
        except Exception:  # noqa: BLE001 - unreadable now: not known
            return False
        return found[-1] if found else None

    return memo(("checkpoint-newest", uri), read, shared=True)
