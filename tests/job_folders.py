"""Where a test finds the checkpoint folder of a job its store launched."""

from __future__ import annotations

from costsched.service.jobs.carry import CHECKPOINT_SCOPE, job_folder
from costsched.store import PriceStore


def folder_of(store: PriceStore, job_id: int) -> str:
    """The job's folder under its checkpoint root: job-ID-STORE (`carry.job_folder`)."""
    return job_folder(job_id, store.jobs.get(job_id).spec.get(CHECKPOINT_SCOPE) or "")
