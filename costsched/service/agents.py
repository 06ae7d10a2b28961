"""Jobs whose agent is gone: said in the job's log and in `status`, and recovered.

A running instance whose agent no longer looks after its job (`Instance.agent`: the
agent's process is gone, or its heartbeat stopped) publishes no checkpoint any more: a
later preemption would lose everything the job did since. Under the job's lease, the
launcher publishes what the job checkpointed, has it checkpoint and stop, and leaves the
instance stopped (`Launcher.recover_agent`); the same reconcile pass then relaunches the
job from its newest checkpoint, as after a preemption. A backend that cannot do so leaves
the job running; its status keeps saying that the agent is gone.
"""

from __future__ import annotations

from datetime import datetime, timezone

from costsched.migration.launcher import Instance, Launcher
from costsched.model import InvalidInput
from costsched.store import PriceStore

LEASE_SECONDS = 300  # as the steps of moves hold it (service.jobs.STEP_LEASE_SECONDS)
EVENT = "agent"  # the job log's event kind for what happened to a job's agent


def look_after(store: PriceStore, launcher: Launcher, job_id: int, instance: Instance,
               at: datetime | None) -> Instance:
    """`instance` as it is once a gone agent was dealt with (unchanged when its agent is
    fine, or another costsched holds the job's lease: it deals with it)."""
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
