"""A gang that lost nodes while rank 0 runs, kept where it is: under the job's lease, the
launcher pauses it (rank 0 checkpoints), replaces each lost node where it ran and resumes
it on N nodes, keeping the nodes still running (`Launcher.repair_nodes`). When no
replacement can start there, the launcher ends the gang: it reads as preempted, and the
same reconcile pass recovers the job where N nodes fit, as after any preemption.

The placement stays open throughout: the job is charged once per node and placement,
from the stored price; the lost node's preemption and a zone without capacity are
recorded in the offerings' availability, as for any instance. A node replaced in place is
a recovery without a move: the job's log keeps it as NODE_RECOVERY (counted with its
recovery moves: `model.recoveries`), and the reconcile that saw it says it (the daemon's
log, the recovery notification), as after any preemption. Once the gang resumed, the
step it resumed from and the steps it lost are kept as a single job's recovery keeps them
(RECOVERY_NOTE: 'instance ID: node 1: resumes from step 300 (its checkpoint's): no step
lost'), which `status` says on that recovery's line.
"""

from __future__ import annotations

from datetime import datetime, timezone

from costsched.gang_stalls import (
    NODE_LINE,
    RESUMES,
    gang_moves_line,
    last_step_words,
    resumed_note,
)
from costsched.migration.launcher import CapacityError, Instance, Launcher, LaunchSpec
from costsched.model import BOOKED_MARKETS, NODE_RECOVERY, RECOVERY_NOTE
from costsched.service.jobs.resumed_words import resumed_words
from costsched.service.jobs.runs import (
    STEP_LEASE_SECONDS,
    JobEvent,
    _open_placement,
    _placed_offering,
    _running,
)
from costsched.store import PriceStore

EVENT = "gang"  # the job log's event kind for what happened to a gang's nodes


def keep(store: PriceStore, launcher: Launcher, job_id: int, instance: Instance,
         at: datetime | None, said: list[JobEvent] | None = None) -> Instance:
    """`instance` once its lost nodes were dealt with (unchanged when it lost none, or
    another costsched holds the job's lease, or a move of the job is under way); what was
    done is appended to `said`, a line each."""
    if not (instance.lost_nodes or instance.replacing) or instance.state != "running":
        return instance
    when = at or datetime.now(timezone.utc)
    with store.leases.holding(f"steps:{job_id}", STEP_LEASE_SECONDS) as mine:
        if not mine or store.jobs.get(job_id).state != "running" \
                or any(not m.ended for m in store.moves.of_job(job_id)):
            return instance
        placement = _open_placement(store, job_id)
        if placement is None or str(placement["instance"]) != instance.id:
            return instance
        from costsched.launch_secrets import SecretMissing
        from costsched.service.booked_jobs import reservation_of  # a gang's repair's
        from costsched.service.jobs.steps import _mover
        from launchers import observed_as, runs_here  # the local launcher's: no market

        offering = _placed_offering(placement)
        try:
            job = _mover(store, launcher, _running(store, job_id), at).job
        except SecretMissing:  # its nodes are replaced by a process that holds its secrets
            return instance
        spec = LaunchSpec(job_id=job.job_id, job_name=job.name, command=job.command,
                          offering=offering, checkpoint_uri=job.checkpoint_uri,
                          attempt=instance.attempt, envs=job.envs, code_uri=job.code_uri,
                          code_sha256=job.code_sha256, code_size=job.code_size,
                          setup=job.setup, task=job.task, secret_names=job.secret_names,
                          zones=job.zones,
                          # a node of a gang in booked capacity is replaced there
                          reservation=reservation_of(store.booked.of_job(job_id), offering.key)
                          if offering.market in BOOKED_MARKETS else "")
        try:
            done = launcher.repair_nodes(instance.id, spec)
        except CapacityError as exc:
            store.availability.record(offering, "capacity", at=when, detail=exc.reason,
                                      source=observed_as(launcher.name))
            nodes = ", ".join(str(r) for r in instance.lost_nodes or instance.replacing)
            done = gang_moves_line(nodes, offering.zone or offering.region, str(exc))
        after = launcher.status(instance.id)
        # Kept: its lost node is counted here, once (a gang ended instead reads as
        # preempted: its recovery move counts it).
        counted = bool(instance.lost_nodes) and after.live
        if counted:
            nodes = ", ".join(str(r) for r in instance.lost_nodes)
            store.availability.record(offering, "preempted", at=when,
                                      detail=f"instance {instance.id} node {nodes}",
                                      source=observed_as(launcher.name))
            done = done or f"node {nodes} was preempted: replaced where it ran"
        if done:
            # Where its stall began: the step it reported last before the loss, and when.
            line = f"instance {instance.id}: {done}" + (last_step_words(
                instance.step, instance.step_at, when) if counted else "")
            store.jobs.note(job_id, NODE_RECOVERY if counted else EVENT, line, at=when)
            resumed = _resumed(line, store.jobs.get(job_id).steps_done, instance, after,
                               runs_here(launcher.name))
            if resumed:  # the steps its recovery lost, as a single job's log keeps them
                store.jobs.note(job_id, RECOVERY_NOTE, f"instance {instance.id}: {resumed}",
                                at=when)
            if said is not None:
                said.append(JobEvent(job_id, "recovery", line + (
                    f"; {resumed.partition(': ')[2]}" if resumed else ""),
                    level="info" if after.live else "warning",
                    notify="recovery" if counted else ""))
        return after


def _resumed(line: str, steps_done: float, before: Instance, after: Instance,
             exact: bool) -> str:
    """Where a repair's line (`gang_stalls.NODE_LINE`'s) says the gang resumes: the words
    of the step it resumes from (the checkpoint rank 0 wrote when the gang paused) and the
    steps lost since the last it reached (`resumed_note`: 'node 1: resumes from step 465
    (its checkpoint's): no step lost'); '' while it does not, or where that step is not
    known. `exact`: its steps are read from this machine (`steps.resume_from`)."""
    nodes = NODE_LINE.match(line)
    said = after if after.checkpoint_step is not None else before
    saved = said.checkpoint_step
    if RESUMES not in line or nodes is None or saved is None:
        return ""
    reached = max(float(s) for s in (steps_done, before.step, after.step) if s is not None)
    return resumed_note(nodes.group(2), resumed_words(float(max(saved, 0)), reached, exact,
                                                      said.checkpoint_step_inferred))
