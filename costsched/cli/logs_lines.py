"""What `logs` says beside a job's output: the instance it comes from, and whose output it
is when several jobs share the name asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costsched.store import PriceStore

LISTED = 5  # the other jobs of a name `logs` names, newest first


def namesakes_line(store: PriceStore, job: str) -> str:
    """When `job` is a name several jobs have: which one's output `logs` shows (the job of
    that name not ended, else the newest: `job_ids`), and how to see another's (by its
    id), in one line; '' otherwise."""
    from costsched.service import jobs as service
    from costsched.shown_state import shown_state

    if job.isdigit():
        return ""
    found = store.jobs.find(job)
    if len(found) < 2:
        return ""
    shown = service.job_ids(store, job, states=())[0]
    why = "the one not ended" if not store.jobs.get(shown).final else "the newest"
    others = [r for r in found if r.id != shown][::-1]  # newest first
    head = f"{len(found)} jobs are named {job}: this is job {shown}'s output ({why}); "
    if len(others) == 1:
        return head + f"`costsched logs {others[0].id}` shows job {others[0].id}'s"
    listed = ", ".join(f"job {r.id} ({shown_state(r)})" for r in others[:LISTED])
    more = f" and {len(others) - LISTED} older" if len(others) > LISTED else ""
    return head + f"`costsched logs ID` shows another's: {listed}{more}"


def instance_header(instance: str, node: int = 0) -> str:
    """The line `logs JOB` starts with on stderr, naming the instance whose output follows
    (", node N" for --node), as `logs --all` heads each instance's output."""
    return f"--- instance {instance}{f', node {node}' if node else ''}"


def instance_line(store: PriceStore, job: str, node: int = 0) -> str:
    """`instance_header` of the instance whose output `logs JOB` shows: the job's current,
    else last; '' for a job never placed."""
    from costsched.service import jobs as service

    job_id = service.job_ids(store, job, states=())[0]
    placed = store.jobs.placement_rows([job_id])
    return instance_header(str(placed[-1].instance), node) if placed else ""
