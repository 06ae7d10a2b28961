"""The agent's heartbeat: its sign of life while it looks after a job.

On the instance, WORKDIR/heartbeat ({"pid", "at": Unix seconds}, written atomically) is
rewritten every poll interval (`beat`); the local launcher reads it (`read_local`) beside
the agent's process. Where costsched cannot look inside the instance, one small object
beside the job's checkpoints, per instance, rewritten every minute:

    <checkpoint location>/agents/<attempt>.json
    {"pid", "at": Unix seconds, "step", "step_at", "checkpoint_step", "checkpoint_version",
     "checkpoint_step_inferred", "setup_since", "no_step_after", "checkpoint_error",
     "restored"}

    publish("s3://bucket/jobs/job-7", "j7-m2-0", document(720, 1767225590.0, 708, 3))
    read("s3://bucket/jobs/job-7", "j7-m2-0")      # the document, or None

"step" is the step the job last wrote to its progress file, "step_at" when it wrote it
(Unix seconds), "checkpoint_step" the step its newest published (or restored) checkpoint
holds, "checkpoint_version" that checkpoint's version: each None when not known;
"checkpoint_step_inferred": true when that step was read off the time the checkpoint was
saved (`launchers.progress_readings`: a floor of the step saved); "setup_since": while the
job's setup runs, when it began (Unix seconds), else None; "no_step_after" and
"checkpoint_error" as the agent's status file says them while the job runs (how long its
command has run without reporting a step, `launchers.unseen`; why its checkpoints are not
published, '' when they are); "restored": what the agent restored when it began, the
newer versions it skipped and why (`costsched.restored`; null before it restored). The
cloud launchers read them into the instances they describe (`steps`; launchers.cloud_steps):
what a move made now loses, and where a recovery resumes. A heartbeat written before they
were (only "pid" and "at") says none of them.

The agent writes it with the instance's own access to the checkpoint store (the instance
profile, the service account), costsched reads it with its own: EC2 and Compute Engine show
costsched an instance's state, not its processes. One write a minute is 1,440 small PUTs a
day per running job (under a cent). The local launcher has no need of it: it sees the
agent's process.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from costsched import restored as restored_doc
from costsched.restored import Restored
from launchers.progress_readings import INFERRED, inferred
from launchers.status_file import NO_STEP, no_step_after

log = logging.getLogger("costsched.agent")
HEARTBEAT = "heartbeat"  # WORKDIR/heartbeat
FOLDER = "agents"
_ATTEMPT = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_ERROR_LIMIT = 2000  # characters of "checkpoint_error" read (the agent's are a line or two)


class Steps(NamedTuple):
    """What a heartbeat says of the job (each None when it does not say it)."""

    step: int | None  # the step the job last wrote to its progress file
    step_at: datetime | None  # when it wrote it (UTC)
    checkpoint_step: int | None  # the step its newest checkpoint holds: where a start resumes
    checkpoint_version: int | None  # that checkpoint's version
    checkpoint_inferred: bool = False  # its step read off the time it was saved
    setup_since: datetime | None = None  # while its setup runs: when it began (UTC)
    no_step_after: float | None = None  # its command ran this long reporting no step
    checkpoint_error: str = ""  # why its checkpoints are not published ('' when they are)
    restored: Restored | None = None  # what its agent restored when it began


def document(step: int | None, step_at: float | None, checkpoint_step: int | None,
             checkpoint_version: int | None, checkpoint_inferred: bool = False,
             setup_since: float | None = None, no_step: float | None = None,
             checkpoint_error: str = "", restored: dict | None = None) -> dict:
    """The heartbeat beside the checkpoints, written now by this process."""
    return {"pid": os.getpid(), "at": time.time(), "step": step, "step_at": step_at,
            "checkpoint_step": checkpoint_step, "checkpoint_version": checkpoint_version,
            INFERRED: checkpoint_inferred, "setup_since": setup_since, NO_STEP: no_step,
            "checkpoint_error": checkpoint_error, "restored": restored}


def steps(doc: dict | None) -> Steps:
    """What heartbeat `doc` says of the job; an old heartbeat (without them), a value that
    is not a whole number >= 0 (a time that is not a finite number) says nothing of it."""
    doc = doc if isinstance(doc, dict) else {}
    error = doc.get("checkpoint_error")
    return Steps(_count(doc.get("step")), _when(doc.get("step_at")),
                 _count(doc.get("checkpoint_step")), _count(doc.get("checkpoint_version")),
                 inferred(doc), _when(doc.get("setup_since")), no_step_after(doc),
                 error[:_ERROR_LIMIT] if isinstance(error, str) else "",
                 restored_doc.read(doc.get("restored")))


def _when(at: object) -> datetime | None:
    if not isinstance(at, (int, float)) or isinstance(at, bool) or not math.isfinite(at):
        return None
    try:
        return datetime.fromtimestamp(at, timezone.utc)
    except (OverflowError, OSError, ValueError):  # beyond the dates a datetime holds
        return None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


class StoreBeat:
    """The agent's heartbeat beside the checkpoints of the instance of `attempt`: due every
    `seconds` (0, or no attempt: never), and at once when the checkpoint version it holds
    is not the one last written (a recovery then reads where the job resumes), the job
    went into or out of its setup, or a line of `said` began or ceased to be said
    (`status` says so). A store that
    fails is said in the log, never fatal; the next beat tries again."""

    def __init__(self, checkpoint_uri: str, attempt: str, seconds: float) -> None:
        self.checkpoint_uri, self.attempt, self.seconds = checkpoint_uri, attempt, seconds
        self._next = 0.0  # time.monotonic() when it is next due
        # (the version, in setup, which lines said) last written; None: none
        self._written: tuple[int | None, bool, bool, bool] | None = None

    @property
    def on(self) -> bool:
        """Whether it is ever written (every `seconds`, for an attempt)."""
        return self.seconds > 0 and bool(self.attempt)

    def due(self, checkpoint_version: int | None, in_setup: bool = False,
            no_step: float | None = None, checkpoint_error: str = "") -> bool:
        if not self.on:
            return False
        # (a line's words may change as what it says does: its coming and going is
        # written at once, its new words with the next beat)
        return (time.monotonic() >= self._next or self._written != (
            checkpoint_version, in_setup, no_step is not None, bool(checkpoint_error)))

    def write(self, step: int | None, step_at: float | None, checkpoint_step: int | None,
              checkpoint_version: int | None, checkpoint_inferred: bool = False,
              setup_since: float | None = None, no_step: float | None = None,
              checkpoint_error: str = "", restored: dict | None = None) -> None:
        from launchers.notices import redact

        self._next = time.monotonic() + self.seconds
        self._written = (checkpoint_version, setup_since is not None, no_step is not None,
                         bool(checkpoint_error))
        try:
            publish(self.checkpoint_uri, self.attempt,
                    document(step, step_at, checkpoint_step, checkpoint_version,
                             checkpoint_inferred, setup_since, no_step, checkpoint_error,
                             restored))
        except Exception as exc:  # noqa: BLE001 - a store error must not end the job
            log.warning("heartbeat to %s: %s", redact(self.checkpoint_uri), exc)


def beat(workdir: Path) -> None:
    """WORKDIR/heartbeat, now (a failed write is retried at the next beat)."""
    temp = workdir / (HEARTBEAT + ".tmp")
    try:
        temp.write_text(json.dumps({"pid": os.getpid(), "at": time.time()}))
        os.replace(temp, workdir / HEARTBEAT)
    except OSError as exc:
        log.warning("heartbeat: %s", exc)


def read_local(workdir: Path) -> dict:
    """The agent's last heartbeat ({} when there is none, or it does not read)."""
    try:
        doc = json.loads((workdir / HEARTBEAT).read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) and isinstance(doc.get("at"), (int, float)) else {}


def stale_after(poll: float) -> float:
    """Seconds without a heartbeat after which an agent whose process still runs is taken
    for hung: long, so that a slow publish of a large checkpoint is never taken for one."""
    return max(30 * poll, 600.0)


def uri(checkpoint_uri: str, attempt: str) -> str:
    """Where the heartbeat of the instance of `attempt` is kept."""
    if not _ATTEMPT.match(attempt or "") or attempt in (".", ".."):
        raise ValueError(f"attempt {attempt!r}: expected 1 to 100 of A-Z a-z 0-9 _ . -")
    return f"{checkpoint_uri.rstrip('/')}/{FOLDER}/{attempt}.json"


def put_doc(store: Any, name: str, doc: object) -> None:
    """Write `doc` as JSON at `name` in a checkpoint store (S3, GCS, Blob or a folder),
    replacing the last one whole: a reader sees the old document or the new one."""
    from launchers.codepack import _kind

    body = json.dumps(doc).encode()
    kind = _kind(store)
    if kind == "s3":
        store.client.put_object(Bucket=store.bucket, Key=store._key(name), Body=body,
                                ContentType="application/json")
    elif kind == "gcs":
        store.bucket.blob(store._key(name)).upload_from_string(
            body, content_type="application/json")
    elif kind == "azure":
        store.put_bytes(name, body, "application/json")
    else:
        root = Path(store.root)
        root.mkdir(parents=True, exist_ok=True)
        temp = root / f".{name}.tmp"
        temp.write_bytes(body)
        temp.replace(root / name)


def get_doc(store: Any, name: str) -> object | None:
    """The JSON document at `name` in a checkpoint store; None when there is none or it
    does not read."""
    from launchers.codepack import _kind

    kind = _kind(store)
    try:
        if kind == "s3":
            try:
                body = store.client.get_object(Bucket=store.bucket,
                                               Key=store._key(name))["Body"].read()
            except store.client.exceptions.NoSuchKey:
                return None
        elif kind == "gcs":
            blob = store.bucket.blob(store._key(name))
            if not blob.exists():
                return None
            body = blob.download_as_bytes()
        elif kind == "azure":
            body = store.get_bytes(name)
            if body is None:
                return None
        else:
            path = Path(store.root) / name
            if not path.is_file():
                return None
            body = path.read_bytes()
        return json.loads(body)
    except ValueError:
        return None


def publish(checkpoint_uri: str, attempt: str, doc: dict) -> None:
    """Write the heartbeat (replacing the last one)."""
    from launchers.checkpoints import open_store  # the stores' clients: a reader may need none

    store = open_store(f"{checkpoint_uri.rstrip('/')}/{FOLDER}")
    put_doc(store, uri(checkpoint_uri, attempt).rsplit("/", 1)[1], doc)


def read(checkpoint_uri: str, attempt: str) -> dict | None:
    """The last heartbeat of the instance of `attempt`; None when there is none (the
    agent has not started yet, or never wrote one) or it does not read."""
    from launchers.checkpoints import open_store

    store = open_store(f"{checkpoint_uri.rstrip('/')}/{FOLDER}")
    doc = get_doc(store, uri(checkpoint_uri, attempt).rsplit("/", 1)[1])
    if not isinstance(doc, dict) or not isinstance(doc.get("at"), (int, float)):
        return None
    return doc
