"""What costsched says of a running job that reports no step: once its command has run a
minute past its setup without writing its step to its progress file (the agent says when,
`launchers.unseen`, as it does of a job that publishes no checkpoint), one line naming the
file and what its figures assume meanwhile; and, beside a price of its rest, that the price
assumes none of its steps done."""

from __future__ import annotations

from costsched.work import PROGRESS_FILE_VARIABLE
from launchers.unseen import took

DOC = "docs/job-contract.md"


def none_done(total: float) -> str:
    """What a price of the rest of a job that reported no step assumes, in words."""
    return f"assume none of its {total:,.0f} steps done"


def no_step_line(after: float, total: float | None) -> str:
    """The line a running job gets once its command ran `after` seconds past its setup
    without reporting a step: the file to write it to, and, where its total is in its own
    steps (`total`; None: no share of its steps is priced), what its figures assume."""
    head = (f"no step reported in {took(after)} of its run: write the step to "
            f"{PROGRESS_FILE_VARIABLE} ({DOC})")
    if total is None:
        return head
    return f"{head}; until then its forecast and moves {none_done(total)}"


def priced_unreported(total: float) -> str:
    """The note beside a price of the rest of a running job that has reported no step, its
    rest priced as all of its `total` steps."""
    return (f"it has reported no step: these figures {none_done(total)} (write the step to "
            f"{PROGRESS_FILE_VARIABLE}; {DOC})")
