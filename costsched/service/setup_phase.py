"""A job whose instance runs its setup (its command not begun yet), as every view says it:
`status` (a line under the job, 'in setup' for its progress), `status --json`
("setup_since", "setup_seconds") and the dashboard. Said only from the instance's own
report (`Instance.setup_since`), never for a job past setup."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

from costsched.amounts import age

IN_SETUP = "in setup"  # its progress while no step is known: never 'no step yet'

if TYPE_CHECKING:
    from costsched.migration.launcher import Instance


def in_setup(instance: Instance | None) -> bool:
    """Whether a running instance has not ended its setup: the one rule for 'in setup'.
    It says when its setup began (`Instance.setup_since`), or it says its command has not
    begun (`ran` False) and its setup has not ended (no `setup_seconds`): an instance
    still booting, restoring a checkpoint or unpacking the code before its setup starts.
    False where the backend does not say (`ran` None) and for a job past setup."""
    if instance is None or instance.state != "running":
        return False
    if instance.setup_since is not None:
        return True
    return instance.ran is False and instance.setup_seconds is None


def setup_seconds(since: datetime, now: datetime | None = None) -> float:
    """How long its setup has run at `now` (default: this moment); 0 for a clock behind."""
    return max(((now or datetime.now(timezone.utc)) - since).total_seconds(), 0.0)


def setup_words(since: datetime, seconds: float, now: datetime | None = None) -> str:
    """'in setup since 00:59:03 UTC (20 s so far), as its instance reports: its command
    starts once setup ends' (the date too when not today's)."""
    today = (now or datetime.now(timezone.utc)).date()
    at = since.astimezone(timezone.utc)
    when = f"{at:%H:%M:%S} UTC" if at.date() == today else f"{at:%Y-%m-%d %H:%M:%S} UTC"
    return (f"{IN_SETUP} since {when} ({age(seconds)} so far), as its instance reports: "
            "its command starts once setup ends")
