"""Where a priced move's restart comes from, in one line beside its price: the decision
model's assumption and the settings that give it, where the launcher boots an instance; on
a launcher that boots none, that it is left out (`ResolvedJob.overheads`)."""

from __future__ import annotations

from costsched.amounts import stored_price
from costsched.jobspec import ResolvedJob
from costsched.optimize.decision import MovePrice
from costsched.optimize.overheads import Overheads

# Where the restart is left out, what the move's price lacks all the same.
SETUP_AGAIN = ": a setup runs again where the job moves, billed there but not in this price"


def restart_line(job: ResolvedJob, configured: Overheads | None, move: MovePrice,
                 checkpoint_gb: float) -> str:
    """'restart assumed: 0.25 h at $0.4028/h, 10 min boot and set-up ([migration]
    restart_minutes) + 5 min warm-up ([migration] warmup_minutes)': the hours the move's
    restart item is billed for on the offering moved to (the job's restart model over
    `configured`, None: the configuration's it was resolved with; `checkpoint_gb`, the
    checkpoint it copies), its price and each part with the setting that gives it;
    'restart left out: the local launcher boots no instance, ...' where the job's launcher
    boots none (its restart then has no boot, warm-up or copy; its setup, run again where
    it moves, is billed there as it runs, and said to be missing from the move's price)."""
    if job.start_left_out:
        return f"restart left out: {job.start_left_out}{SETUP_AGAIN}"
    hours = job.overheads(configured).restart_hours(checkpoint_gb)
    words = job.restart_words(configured, checkpoint_gb)
    if hours <= 0:
        return f"restart assumed: none, {words}"
    each = "" if job.nodes <= 1 else f" for its {job.nodes} instances"
    return (f"restart assumed: {hours:.4g} h at {stored_price(float(move.restart_usd) / hours)}/h"
            f"{each}, {words}")
