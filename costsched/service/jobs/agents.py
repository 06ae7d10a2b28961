"""Jobs whose agent is gone: said in the job's log and in `status`, and recovered.

A running instance whose agent no longer looks after its job (`Instance.agent`: the
agent's process is gone, or its heartbeat stopped) publishes no checkpoint any more: a
later preemption would lose everything the job did since. Under the job's lease, the
launcher publishes what the job checkpointed, has it checkpoint and stop, and leaves the
instance stopped (`Launcher.recover_agent`); the same reconcile pass then relaunches the
job from its newest checkpoint, as after a preemption. A backend that cannot do so leaves
the job running; its status keeps saying that the agent is gone.

Backends that cannot see an agent's process (EC2, Compute Engine) are read through the
heartbeat the agent writes beside the job's checkpoints every minute
(`launchers.heartbeats`): one older than STALE_SECONDS says the agent is gone. It is read
at most every CHECK_SECONDS per instance by a costsched process; an instance that has
written none yet (still installing) is not judged.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from datetime import datetime, timezone

from costsched.migration.launcher import Instance, Launcher
from costsched.model import InvalidInput
from costsched.service.jobs import gangs
from costsched.store import PriceStore

LEASE_SECONDS = 300  # as the steps of moves hold it (service.jobs.STEP_LEASE_SECONDS)
EVENT = "agent"  # the job log's event kind for what happened to a job's agent
STALE_SECONDS = 300.0  # a heartbeat beside the checkpoints (written every 60 s) this old
CHECK_SECONDS = 120.0  # how often one costsched reads an instance's heartbeat there
log = logging.getLogger("costsched.agents")
_read: dict[str, tuple[float, dict | None]] = {}  # instance id: (monotonic, heartbeat)


def with_heartbeat(launcher: Launcher, checkpoint_uri: str, instance: Instance) -> Instance:
    """`instance`, its `agent` said from its heartbeat beside the checkpoints when its
    backend cannot see the agent's process (unchanged for those that can)."""
    if launcher.sees_agents or instance.agent or instance.state != "running" \
            or not checkpoint_uri:
        return instance
    now = time.monotonic()
    seen = _read.get(instance.id)
    if seen is None or now - seen[0] >= CHECK_SECONDS:
        from launchers import heartbeats

        try:
            seen = (now, heartbeats.read(checkpoint_uri, instance.attempt))
        except Exception as exc:  # noqa: BLE001 - a store that fails says nothing here
            log.warning("heartbeat of %s: %s", instance.id, exc)
            seen = (now, None)
        _read[instance.id] = seen
    beat = seen[1]
    if not beat:
        return instance
    age = time.time() - float(beat["at"])
    if age <= STALE_SECONDS:
        return instance
    said = f"the agent has not written its heartbeat for {age / 60:,.0f} min"
    return replace(instance, agent=said, checkpoint_error=said)


def look_after(store: PriceStore, launcher: Launcher, job_id: int, instance: Instance,
               at: datetime | None, checkpoint_uri: str = "",
               said: list | None = None) -> Instance:
    """`instance` as it is once a gone agent was dealt with (unchanged when its agent is
    fine, or another costsched holds the job's lease: it deals with it); a gang's lost
    nodes replaced first (`gangs.keep`, what it did appended to `said`)."""
    instance = gangs.keep(store, launcher, job_id, instance, at, said)
    instance = with_heartbeat(launcher, checkpoint_uri, instance)
    if not instance.agent or instance.state not in ("running", "pending"):
        return instance
    when = at or datetime.now(timezone.utc)
    with store.leases.holding(f"steps:{job_id}", LEASE_SECONDS) as mine:
        if not mine or store.jobs.get(job_id).state != "running":
            return instance
        said = store.jobs.last_details([job_id], EVENT).get(job_id, "")
        if not said.startswith(f"instance {instance.id}: "):  # said once per instance
            store.jobs.note(job_id, EVENT, f"instance {instance.id}: {instance.agent}",
                            at=when)
        try:
            recovered = launcher.recover_agent(instance.id)
        except (InvalidInput, OSError) as exc:  # e.g. its checkpoint store is unreachable
            line = f"instance {instance.id}: not recovered: {exc}"
            if said != line:
                store.jobs.note(job_id, EVENT, line, at=when)
            return instance
        if not recovered:
            return instance
        after = launcher.status(instance.id)
        store.jobs.note(job_id, EVENT, f"instance {instance.id}: {after.detail}", at=when)
        return after
