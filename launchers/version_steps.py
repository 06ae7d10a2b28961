"""The step each checkpoint version holds, kept beside the checkpoints by the agent that
published it, so that the agent that restores the version knows it too (a job whose
marker holds no step, whose files are not named by it: its step was read off the reports'
times, `launchers.progress_readings`, by the agent of the run that saved it):

    <checkpoint location>/steps/steps.json
    {"7": {"step": 60, "inferred": false}, "8": {"step": 398, "inferred": true}}

"inferred": the step was read off the time the version's files were written (a floor of
the step saved). The newest KEPT versions are kept (the store keeps fewer). A store that
fails is said in the log, never fatal: the restored version's step is then not known.
"""

from __future__ import annotations

import logging

from launchers.checkpoints import open_store
from launchers.heartbeats import get_doc, put_doc

log = logging.getLogger("costsched.agent")
FOLDER = "steps"
NAME = "steps.json"
KEPT = 10


def _store(checkpoint_uri: str):  # noqa: ANN202 - a CheckpointStore
    return open_store(f"{checkpoint_uri.rstrip('/')}/{FOLDER}")


def _read(checkpoint_uri: str) -> dict:
    doc = get_doc(_store(checkpoint_uri), NAME)
    return doc if isinstance(doc, dict) else {}


def keep(checkpoint_uri: str, version: int, step: int, inferred: bool) -> None:
    """Keep `step` as version `version`'s (`inferred`: read off its files' time)."""
    try:
        doc = _read(checkpoint_uri)
        doc[str(version)] = {"step": step, "inferred": inferred}
        newest = sorted((k for k in doc if k.isdigit()), key=int)[-KEPT:]
        put_doc(_store(checkpoint_uri), NAME, {k: doc[k] for k in newest})
    except Exception as exc:  # noqa: BLE001 - a store error must not end the job
        log.warning("the step of checkpoint version %d: not kept (%s)", version, exc)


def of(checkpoint_uri: str, version: int) -> tuple[int | None, bool]:
    """(the step version `version` holds, whether it is inferred); (None, False) when not
    known (an older agent published it, or the store cannot be read)."""
    try:
        said = _read(checkpoint_uri).get(str(version))
    except Exception as exc:  # noqa: BLE001
        log.warning("the step of checkpoint version %d: not read (%s)", version, exc)
        return None, False
    step = said.get("step") if isinstance(said, dict) else None
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        return None, False
    return step, said.get("inferred") is True
