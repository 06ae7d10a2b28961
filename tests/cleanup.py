"""Stopping what a test launched, at its end, when the job may end by itself meanwhile."""

from __future__ import annotations

from costsched.migration.launcher import Launcher
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store.prices import PriceStore


def stop_unless_ended(store: PriceStore, launcher: Launcher, job_id: int) -> None:
    """Stop the job `job_id` if it is still going. A job can end between the check and the
    stop (a short command runs to its end), and `stop` then refuses it, "nothing to stop":
    that refusal is fine here, any other is not."""
    if store.jobs.get(job_id).final:
        return
    try:
        service.stop(store, launcher, job_id)
    except InvalidInput:
        if not store.jobs.get(job_id).final:
            raise
