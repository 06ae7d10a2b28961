"""A job's own output on the dashboard, masked as `costsched logs` masks it: the values of
the job's --secret names, which are never stored, taken from this process's environment
(where `logs` takes them from its own, as the launch did). A job's agents write its log
with those values masked already; a job stored before they did, given a secret whose value
this environment does not hold, cannot be masked here: its output is withheld, and the page
says why and what shows it."""

from __future__ import annotations

import os

from costsched.redact import redact, remembered_masked
from costsched.service.glance import masked_at_source, remember_secrets, secret_names


def unknown_secrets(stored: dict) -> list[str]:
    """The --secret names of a stored job whose values this process cannot mask (not in
    its environment) where its log may hold them; the others are remembered, masked from
    now on."""
    names = secret_names(stored)
    remember_secrets(stored)
    if masked_at_source(stored):
        return []
    return [name for name in names if name not in os.environ]


def withheld(job_id: int, unknown: list[str]) -> str:
    """The line shown in place of a job's output that cannot be masked: why, and the fix."""
    named = ", ".join(unknown)
    return (f"(output withheld: job {job_id} was given --secret {named}, whose value this "
            "dashboard's environment does not hold, so it could not be masked if the job "
            f"printed it; start the dashboard with {named} set, or run `costsched logs "
            f"{job_id}` where {'it is' if len(unknown) == 1 else 'they are'} set)")


def shown(job_id: int, stored: dict, text: str) -> str:
    """`text` (the job's output) as the dashboard shows it: credentials and the job's
    --secret values masked, or the `withheld` line."""
    unknown = unknown_secrets(stored)
    if unknown:
        return withheld(job_id, unknown)
    return redact(remembered_masked(text))


def shown_lines(job_id: int, stored: dict, lines: list[str]) -> list[str]:
    """`shown`, line by line (a failure's last lines of output)."""
    unknown = unknown_secrets(stored)
    if unknown:
        return [withheld(job_id, unknown)] if lines else []
    return [redact(remembered_masked(line)) for line in lines]
