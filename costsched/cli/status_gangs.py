"""`status`'s lines of a job's recoveries: a gang's nodes replaced in place
(`node_notices`) and the steps each recovery lost (`lost_lines`), one line a recovery."""

from __future__ import annotations

from typing import TYPE_CHECKING

from costsched.model import GANG_RESUMED, GANG_RESUMES, GANG_STOPPED_FIRST, lost_steps_said
from costsched.service import jobs as service

if TYPE_CHECKING:
    from costsched.store.job_rows import EventRow


def node_notices(s: service.JobStatus) -> list[str]:
    """What happened to a gang's nodes replaced in place (its NODE_RECOVERY events): while
    the gang is not whole again (its instance has nodes lost or being replaced), those of
    the placement it runs on now as they stand ('instance ID: node 1 was preempted:
    replaced where it ran'); once whole, or the job ended, and those of placements before,
    at the time each came, as a recovery with a move is said ('recovered at 2026-12-01
    05:10 UTC: instance ID: node 1 was preempted: ...'), and counted with its recoveries.
    One the gang resumed after ends with the step it resumed from and the steps lost, as a
    single job's recovery says them ('; resumes from step 304 (its checkpoint's): no step
    lost'). One its job was stopped in before the gang resumed is no recovery: 'preempted
    at ...: ...; the job was stopped before the gang resumed'. Nodes its instance says are
    lost that no line says yet: `unseen_loss`."""
    out_now = not s.record.final and bool(s.nodes_out) and s.open_placement is not None
    since = s.open_placement.get("start_at") if out_now else None
    # Once whole, what the line said would come came, for a gang running or done since.
    came = f"; {GANG_RESUMED}" if s.record.state in ("running", "succeeded") else ""
    from costsched.gang_stalls import resumes_of  # (reads the store's rows: not at parsing)

    resumed = resumes_of(s.node_recoveries, s.recovered)
    now = [e for e in s.node_recoveries if out_now and e.id not in resumed
           and (since is None or e.at >= since)]
    return [str(e.detail) if e in now else
            # stopped while its node was replaced: nothing was recovered
            f"preempted at {e.at:%Y-%m-%d %H:%M} UTC: " + _words(e, f"; {STOPPED_FIRST}")
            if e.id in s.stopped_first else
            f"recovered at {e.at:%Y-%m-%d %H:%M} UTC: " + _words(e, came)
            + _resumed(resumed.get(e.id))
            for e in s.node_recoveries] + ([] if now or not out_now else [unseen_loss(s)])


# A gang's node replaced in place, the job stopped before the gang resumed on it.
STOPPED_FIRST = f"the job was {GANG_STOPPED_FIRST}"


def _words(event: EventRow, came: str) -> str:
    """A NODE_RECOVERY line, what it said would come (`GANG_RESUMES`) replaced by what
    did (`came`)."""
    return str(event.detail).replace(f"; {GANG_RESUMES}", came)


def unseen_loss(s: service.JobStatus) -> str:
    """A gang whose instance says nodes are lost that no pass has dealt with yet: it does
    not train until they are replaced, and what replaces them."""
    nodes = ", ".join(str(r) for r in s.nodes_out)
    instance = s.open_placement.get("instance") if s.open_placement else None
    head = f"instance {instance}: " if instance else ""
    what = (f"; `costsched status {s.record.id}` (without --no-reconcile) replaces it"
            if not s.looked_after else "")
    return f"{head}node {nodes} lost: the gang does not train until it is replaced{what}"


def instance_state(s: service.JobStatus) -> str:
    """Its instance's state for `status`'s table: a gang's lost nodes named ('running
    (node 1 lost)': the gang does not train meanwhile)."""
    if s.instance_state == "running" and s.nodes_out and not s.record.final:
        return f"running (node {', '.join(str(r) for r in s.nodes_out)} lost)"
    return s.instance_state or "-"


def _resumed(note: EventRow | None) -> str:
    """'; resumes from step 304 ...' of a gang's resume note (`gang_stalls.resumed_note`)."""
    if note is None:
        return ""
    words = lost_steps_said(str(note.detail))[1]
    return f"; {words.partition(': ')[2]}"


def lost_lines(s: service.JobStatus) -> list[str]:
    """The steps each of its recoveries lost, as its log keeps them (`steps.resume_from`'s
    words): 'recovered at 2026-11-30 17:56 UTC: instance ID: resumes from step 300 (its
    checkpoint's): 78 steps lost' ('at least' for a cloud's instance, gone with its last
    steps), at the time its recovery began; one that waits to start (a secret), 'preempted
    at ...: will resume from ..., once its recovery starts' (`recovered.recovery_line`).
    A restart on error's line too: 'restarted at ... UTC: exited 2 (...): restarted from
    step 300, 1 of 3 restarts on errors used'. A gang's resume after a node replaced in
    place is said on that recovery's line (`node_notices`), not again. A start's line too:
    'started again at ... UTC: resumes from step 3,471 (its checkpoint's)'
    (`recovered.started_lines`), and a migration's: 'moved at ... UTC: instance ID:
    resumes from step 198 (its checkpoint's): no step lost' (`moved.moved_lines`); in the
    order they came."""
    from costsched.gang_stalls import resumes_of
    from costsched.service.jobs.moved import moved_lines
    from costsched.service.jobs.recovered import gang_moved, recovery_line, started_lines

    placed = [c.placement for c in s.cost.charged]
    said = {e.id for e in resumes_of(s.node_recoveries, s.recovered).values()}
    lines = [(e.at, f"restarted at {e.at:%Y-%m-%d %H:%M} UTC: {e.detail}"
              if e in s.restarted else recovery_line(e, s.moves, placed, s.waits,
                                                     gang_moved(e, s.gangs_ended, placed)))
             for e in sorted((*s.recovered, *s.restarted), key=lambda e: e.id)
             if e.id not in said]
    # A user's start says where it resumed from, as a recovery does (it is no recovery).
    return [line for _, line in sorted([*lines, *started_lines(s.moves),
                                        *moved_lines(s.moved, s.moves)], key=lambda x: x[0])]
