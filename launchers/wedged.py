"""A wedged cloud instance: the cloud says it runs, yet its agent has written no heartbeat
beside the job's checkpoints (launchers.heartbeats) for WEDGED_SECONDS. A dead agent alone
is started again inside the instance within a few minutes (launchers.agent_supervisor); a
heartbeat this old says the instance itself no longer works (a hung kernel, a full disk, a
lost network), and only ending it and relaunching the job from its newest checkpoint
helps."""

from __future__ import annotations

import time

from costsched.model import InvalidInput
from launchers import heartbeats
from launchers.userdata import read_payload

# The service says an agent is gone after 5 minutes without a heartbeat; the supervisor's
# restart (the old job's grace, a restore of the newest checkpoint) may take some more.
WEDGED_SECONDS = 900.0


def is_wedged(startup_script: str, now: float | None = None) -> bool:
    """Whether the instance started by `startup_script` (its job's checkpoints and launch
    attempt) has written no heartbeat for WEDGED_SECONDS; an instance that wrote none yet
    (still installing) is not judged."""
    try:
        job = read_payload(startup_script)
        uri, attempt = str(job["checkpoint_uri"]), str(job["attempt"])
    except (InvalidInput, ValueError, KeyError):  # not a script of ours
        return False
    return heartbeat_older(uri, attempt, now)


def heartbeat_older(checkpoint_uri: str, attempt: str, now: float | None = None) -> bool:
    """Whether the instance of `attempt` wrote its last heartbeat beside `checkpoint_uri`
    more than WEDGED_SECONDS ago (False when it wrote none)."""
    try:
        beat = heartbeats.read(checkpoint_uri, attempt)
    except (InvalidInput, ValueError, KeyError):  # no heartbeat
        return False
    if not beat:
        return False
    now = time.time() if now is None else now
    return now - float(beat["at"]) > WEDGED_SECONDS
