"""The step a job on a cloud instance stands at, and its newest checkpoint's: what its
agent's heartbeat beside the job's checkpoints says (launchers.heartbeats). EC2, Compute
Engine and Azure show costsched an instance's state, not its agent's status file; the
heartbeat (rewritten every minute, and at once when a checkpoint is published) carries
what that file says of the job.

A launcher that describes instances says where each one's heartbeat is, from what its cloud
keeps of it (a tag naming the job's checkpoint location, or its startup script), as
`Place`s; `with_steps` reads each heartbeat once per describe pass and fills
`Instance.step`, `step_at`, `checkpoint_step` and `checkpoint_version` from it, and, while
the instance runs, `setup_since` while the job's setup runs (`status`: "in setup since"),
`no_step_after` once its command has run a while without reporting a step and
`checkpoint_error` while its checkpoints are not published, as the agent says them in its
status file (the local launcher's: the same lines in `status`). An
instance whose heartbeat is not there (still installing), or cannot be read, or was
written before heartbeats carried steps, keeps them None: what a move loses is then the
decision model's assumption.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from costsched.migration.launcher import TAG_ATTEMPT, TAG_JOB, Instance
from costsched.model import InvalidInput
from launchers import heartbeats

# The job's checkpoint location, tagged on an instance where its cloud takes tags of up to
# TAG_LIMIT characters (EC2, Azure): where its heartbeat is.
TAG_CHECKPOINTS = "costsched-checkpoints"
TAG_LIMIT = 256
log = logging.getLogger("costsched.launchers")


class Place(NamedTuple):
    """Where the heartbeat of the instance of a job's launch attempt is."""

    job_id: int
    attempt: str
    checkpoint_uri: str


def tagged(tags: Mapping[str, object] | None) -> Place | None:
    """The place its tags say (None: they do not name the checkpoint location)."""
    tags = tags or {}
    job, uri = str(tags.get(TAG_JOB, "")), str(tags.get(TAG_CHECKPOINTS, ""))
    attempt = str(tags.get(TAG_ATTEMPT, ""))
    return Place(int(job), attempt, uri) if job.isdigit() and attempt and uri else None


def ec2_tagged(record: Mapping[str, Any]) -> Place | None:
    """The place an EC2 describe_instances record's tags say."""
    return tagged({t["Key"]: t["Value"] for t in record.get("Tags", [])})


def scripted(script: str) -> Place | None:
    """The place the startup script (`launchers.userdata`) an instance was made with says
    (None: not a script of costsched's)."""
    from launchers.userdata import read_payload

    try:
        job = read_payload(script)
        return Place(int(job["job_id"]), str(job["attempt"]), str(job["checkpoint_uri"]))
    except (InvalidInput, ValueError, KeyError, TypeError):
        return None


def gce_scripted(record: Any) -> Place | None:
    """The place a Compute Engine instance's startup script (its metadata) says."""
    items = record.metadata.items if record.metadata else []
    return scripted(next((i.value for i in items if i.key == "startup-script"), ""))


def tag_value(checkpoint_uri: str) -> dict[str, str]:
    """{TAG_CHECKPOINTS: location} for a new instance's tags; {} when it is too long to be
    a tag's value (its instances then say no step)."""
    if not checkpoint_uri or len(checkpoint_uri) > TAG_LIMIT:
        return {}
    return {TAG_CHECKPOINTS: checkpoint_uri}


def with_steps(instances: Sequence[Instance], places: Iterable[Place | None],
               only: Collection[str] | None = None) -> list[Instance]:
    """`instances`, each with the steps its heartbeat says (its place found by its job and
    launch attempt; one read per instance; `only`: of these instance ids alone, the others
    listed with them unread); unchanged where none is known."""
    where = {(p.job_id, p.attempt): p.checkpoint_uri for p in places if p is not None}
    return [_filled(i, where[(i.job_id, i.attempt)])
            if (i.job_id, i.attempt) in where and (only is None or i.id in only) else i
            for i in instances]


def _filled(instance: Instance, checkpoint_uri: str) -> Instance:
    if instance.step is not None and instance.checkpoint_step is not None:
        return instance
    try:
        said = heartbeats.steps(heartbeats.read(checkpoint_uri, instance.attempt))
    except Exception as exc:  # noqa: BLE001 - a store that fails says no step
        log.debug("heartbeat of %s: %s", instance.id, exc)
        return instance
    if instance.state == "running":  # what its agent's status file says while it runs
        instance = replace(instance, setup_since=said.setup_since or instance.setup_since,
                           no_step_after=said.no_step_after or instance.no_step_after,
                           checkpoint_error=instance.checkpoint_error
                           or said.checkpoint_error)
    if said.step is None and said.checkpoint_step is None:
        return instance
    return replace(instance, step=said.step, step_at=said.step_at,
                   checkpoint_step=said.checkpoint_step,
                   checkpoint_version=said.checkpoint_version,
                   checkpoint_step_inferred=said.checkpoint_inferred,
                   restored=said.restored)
