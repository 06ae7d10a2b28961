"""A job's secrets on EC2 (launchers.cloud_secrets): SecureString SSM parameters
/costsched/job-<job>/<key>/<NAME> of the instance's region, <key> naming the launch attempt.
The instance profile needs ssm:GetParameter on them (and ssm:DeleteParameters to delete
them once read; without it they go when the launcher ends the instance)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from launchers import cloud_secrets
from launchers.base import Instance, LaunchSpec

ROOT = "/costsched/"
log = logging.getLogger("costsched.aws_secrets")


def prefix(job_id: int, attempt: str) -> str:
    return f"{ROOT}job-{int(job_id)}/{cloud_secrets.key(job_id, attempt)}/"


def put(ssm: Any, spec: LaunchSpec) -> dict[str, str]:
    """The job's secrets as parameters; {name: parameter name}."""
    refs = {}
    for name in spec.secret_names:
        ref = prefix(spec.job_id, spec.attempt) + name
        ssm.put_parameter(Name=ref, Value=spec.envs[name], Type="SecureString",
                          Overwrite=True, Description=f"costsched job {spec.job_id}")
        refs[name] = ref
    return refs


def _listed(ssm: Any, path: str) -> list[dict]:
    pages = ssm.get_paginator("get_parameters_by_path").paginate(
        Path=path.rstrip("/"), Recursive=True, WithDecryption=False)
    return [p for page in pages for p in page.get("Parameters", [])]


def _delete(ssm: Any, names: list[str]) -> list[str]:
    for start in range(0, len(names), 10):  # SSM deletes up to 10 a call
        ssm.delete_parameters(Names=names[start:start + 10])
    return names


def delete(ssm: Any, job_id: int, attempt: str) -> list[str]:
    """Delete the attempt's parameters (none left: nothing done); their names."""
    return _delete(ssm, sorted(p["Name"] for p in _listed(ssm, prefix(job_id, attempt))))


def sweep(ssm: Any, live: Iterable[Instance], now: float | None = None) -> list[str]:
    """Delete the parameters of attempts with no live instance among `live` (Instances),
    older than SWEEP_AFTER_SECONDS; their names."""
    keys = cloud_secrets.live_keys(live)
    now = time.time() if now is None else now
    old = []
    for parameter in _listed(ssm, ROOT):
        parts = parameter["Name"][len(ROOT):].split("/")
        changed = parameter.get("LastModifiedDate")
        age = now - changed.timestamp() if changed is not None else float("inf")
        if len(parts) == 3 and parts[1] not in keys and age > cloud_secrets.SWEEP_AFTER_SECONDS:
            old.append(parameter["Name"])
    if old:
        log.info("deleted %d leftover secret parameters", len(old))
    return _delete(ssm, sorted(old))
