"""The record of a local instance and the marks in its folder (`launchers.local`'s doc):
instance.json as a launch writes it, the files that say it was terminated, noticed or
lost its agent, and what its status file's end says."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime, timezone
from pathlib import Path

from costsched.model import InvalidInput
from launchers import gang
from launchers.base import TAG_ATTEMPT, TAG_JOB, LaunchSpec
from launchers.status_file import STATUS

INSTANCE = "instance.json"
TERMINATED = "terminated"
NOTICE = "notice"
AGENT_LOST = "agent-lost"  # present once the job was stopped because its agent was gone
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")  # fullmatch: "$" would let "a\n" through
NAME_RULE = "1 to 100 of A-Z a-z 0-9 _ . -"


def instance_id_of(spec: LaunchSpec) -> str:
    if isinstance(spec.job_id, bool) or not isinstance(spec.job_id, int) or spec.job_id < 0:
        raise InvalidInput(f"job id {spec.job_id!r}: expected a whole number >= 0")
    # The attempt names the instance's directory; the job's name is only data.
    value = spec.attempt
    if not isinstance(value, str) or not _NAME.fullmatch(value) or value in (".", ".."):
        raise InvalidInput(f"attempt {value!r}: expected {NAME_RULE}")
    return f"{spec.job_id}-{spec.attempt}"


def new_record(instance_id: str, spec: LaunchSpec) -> dict:
    offering = spec.offering
    return {"id": instance_id, "job_id": spec.job_id, "job_name": spec.job_name,
            "attempt": spec.attempt, "command": spec.command,
            "checkpoint_uri": spec.checkpoint_uri, "code_uri": spec.code_uri,
            "offering": dataclasses.asdict(offering), "offering_key": list(offering.key),
            "tags": {TAG_JOB: str(spec.job_id), TAG_ATTEMPT: spec.attempt},
            "env_names": sorted(spec.envs),  # names only: values may be secrets
            "nodes": gang.node_count(spec.task),
            "launched_at": datetime.now(timezone.utc).isoformat(),
            "pid": None, "start_time": None}


def ended_at(folder: Path) -> datetime | None:
    """When the agent in `folder` wrote its end (its status file's last write: nothing
    writes it after the end); None when it cannot be read."""
    try:
        return datetime.fromtimestamp((folder / STATUS).stat().st_mtime, timezone.utc)
    except OSError:
        return None


def ended_first(folder: Path, ended: dict) -> bool:
    """Whether the job in `folder` ended by itself (`ended`: its end as the agent wrote
    it; succeeded or failed) before costsched terminated its instance, as a clean-up
    after its end does: it reads as it ended, not as terminated. An end written after the
    terminate (the agent's stop on its signal) is the terminate's."""
    if ended.get("state") not in ("succeeded", "failed"):
        return False
    at = ended_at(folder)
    try:
        marked = datetime.fromtimestamp((folder / TERMINATED).stat().st_mtime, timezone.utc)
    except OSError:
        return False
    return at is not None and at <= marked


def says_ended(status: dict) -> bool:
    """Whether the agent's status.json says the job ended (it says "running" while it runs)."""
    return bool(status) and status.get("state", "running") != "running"
