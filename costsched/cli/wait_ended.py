"""What `costsched status --wait N` says when its N seconds end before every job it shows:
a line naming the jobs not ended, and its own exit code, so that a script can tell a
finished job from a wait that ran out (`status --wait 600 && costsched fetch JOB`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# As `timeout` exits when the command it runs outlives it.
EXIT_WAIT_RAN_OUT = 124
HELP = ("Seconds to wait for the jobs to end, recovering them as needed (0: show them now); "
        f"exit code {EXIT_WAIT_RAN_OUT} when the wait ends before every job shown.")


def not_ended(shown: Sequence[Any], wait: float) -> str:
    """'after --wait 15, 1 job has not ended: job 2 (clf-ft) running' for the jobs of
    `shown` (each a JobStatus) not in a final state once a wait of `wait` seconds is over;
    '' when every one ended or nothing was waited for."""
    jobs = [s.record for s in shown if not s.record.final]
    if wait <= 0 or not jobs:
        return ""
    named = ", ".join(f"job {r.id} ({r.name}) {r.state}" for r in jobs)
    count = "1 job has" if len(jobs) == 1 else f"{len(jobs)} jobs have"
    return f"after --wait {wait:g}, {count} not ended: {named}"
