"""A job's secrets on the clouds: where an instance reads them at boot, and when they go.

`costsched launch --secret NAME=VALUE` values are never stored by costsched. To reach a
cloud instance without travelling in its user data or metadata (which anything on the
instance, and anyone allowed to describe it, can read), each secret is put in the cloud's
secret store for one launch attempt of the job: an SSM SecureString parameter on EC2
(launchers.aws_secrets), a Secret Manager secret on Compute Engine
(launchers.gcp_secrets). The instance reads them with its own role at boot, keeps them in
a file only root reads (for its agent's restarts: launchers.agent_supervisor), and
deletes the cloud's copy when its role allows. The launcher deletes them too when it ends
the attempt's instance (idempotently), and sweeps what a launch that crashed left: the
secrets of an attempt with no live instance, older than SWEEP_AFTER_SECONDS (a launch
under way puts its secrets before it asks for the instance).
"""

from __future__ import annotations

from collections.abc import Iterable

from launchers import cloud_gang
from launchers.base import Instance

SWEEP_AFTER_SECONDS = 900.0
TAG_KEY = "costsched-secret-of"  # label/tag: the key of the (job, attempt) a secret is for


def key(job_id: int, attempt: str) -> str:
    """The 12 hex digits naming a (job, attempt)'s secrets: a gang's digest, so that a
    gang's handle names its secrets too."""
    return cloud_gang.digest(job_id, attempt)


def live_keys(instances: Iterable[Instance]) -> set[str]:
    """The keys of the attempts that have a live (pending or running) instance."""
    return {key(i.job_id, i.attempt) for i in instances if i.state in ("pending", "running")}
