"""What `costsched status --wait N` says when its N seconds end before every job it shows,
or when a job it waited for ended failed: a line naming those jobs, and an exit code of its
own for each, so that a script can tell a job that succeeded from one that failed and from
a wait that ran out (`status JOB --wait 600 && costsched fetch JOB DIR`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from costsched.cli.common import EXIT_FAILED

# As `timeout` exits when the command it runs outlives it.
EXIT_WAIT_RAN_OUT = 124
EXIT_WAITED_FAILED = EXIT_FAILED  # a job waited for ended failed
HELP = ("Seconds to wait for the jobs to end, recovering them as needed (0: show them now); "
        f"exit code {EXIT_WAIT_RAN_OUT} when the wait ends before every job shown, else "
        f"{EXIT_WAITED_FAILED} when a job waited for (the one named, else each not ended "
        "when the wait began) ended failed.")


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


def waited_for(shown: Sequence[Any], named: bool) -> set[int]:
    """The ids of the jobs a wait is for, at its first look at `shown` (each a JobStatus):
    every one shown when a job was named (`status JOB --wait`: that job, ended or not),
    else those not ended yet (a job that failed last week is no news of this wait)."""
    return {s.record.id for s in shown if named or not s.record.final}


def ended_failed(shown: Sequence[Any], waited: set[int], wait: float) -> str:
    """'after --wait 15, 1 job waited for ended failed: job 8 (dpfail)' for the jobs of
    `shown` among `waited` that are failed once the wait is over; '' when none is or
    nothing was waited for."""
    jobs = [s.record for s in shown if s.record.id in waited and s.record.state == "failed"]
    if wait <= 0 or not jobs:
        return ""
    named = ", ".join(f"job {r.id} ({r.name})" for r in jobs)
    count = "1 job" if len(jobs) == 1 else f"{len(jobs)} jobs"
    return f"after --wait {wait:g}, {count} waited for ended failed: {named}"
