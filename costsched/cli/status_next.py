"""What a job's lines under `status` say comes next: how a job stopped, failed or ended
short starts again and from which step, and where the start takes the secrets it needs
(each a command that works when run as written)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from costsched.service.jobs.state_said import STARTABLE

if TYPE_CHECKING:
    from costsched.service import jobs as service
    from costsched.store.jobs import JobRecord


def secrets_for_start(s: service.JobStatus, said: list[str]) -> list[str]:
    """Where the job can be started now (stopped, by its user or a budget's cap, failed,
    or ended short of its steps), a line of `said` names `costsched start` and this shell
    lacks one of its secrets (never stored): where the start takes them from, so that the
    hint works when run (`launch_secrets.start_needs`). A job that runs, or has ended for
    good, has no start to make: [] for it."""
    if not (s.record.state in STARTABLE or s.steps_not_reached) or not any(
            "`costsched start" in line for line in said):
        return []
    from costsched.launch_secrets import start_needs

    return [line] if (line := start_needs(s.record.id, s.record.spec)) else []


def next_to_start(said: list[str], added: list[str]) -> list[str]:
    """`said` with `added` right after its first line naming `costsched start`."""
    at = next((n + 1 for n, line in enumerate(said) if "`costsched start" in line), len(said))
    return [*said[:at], *added, *said[at:]]


def short_next(s: service.JobStatus) -> str:
    """What a job that ended short does next: `start` does the rest (from step 0 where it
    published no checkpoint: `steps.resume_step`), unless a start of it ended at no
    further step (its command stops there by itself)."""
    if not s.start_went_nowhere:
        from costsched.service.jobs.resumed_words import (
            FROM_NO_CHECKPOINT,
            resumes_from_checkpoint,
        )
        from costsched.service.jobs.steps import resume_step

        at = resume_step(None, s.record.checkpoint_location or "")
        none = at is not None and not resumes_from_checkpoint(at)
        return (f"`costsched start {s.record.id}` does the rest "
                + (FROM_NO_CHECKPOINT if none
                   else "from its newest verified checkpoint"))
    from costsched.work import declared_steps

    return (f"its start made no progress: it exited 0 at step {s.step:,.0f}, no further than "
            "its run before, so its command stops there by itself (check its `run` against "
            f"{declared_steps(s.record.spec, s.own_total or 0)})")


def stopped_next(s: service.JobStatus) -> str:
    """How a job stopped by `costsched stop` starts again, and from which step (its newest
    verified checkpoint's, as its stop recorded it; step 0 when its checkpoint store holds
    none, as one stopped in its setup: `steps.resume_step`); '' for any other job (a cap's
    stop says its own: `cap_lines`)."""
    from costsched import own_budget

    if s.record.state != "stopped" or s.steps_not_reached \
            or own_budget.stopped_at(s.stopped_why, s.record.id) is not None:
        return ""
    return stopped_starts_again(s.record)


def stopped_starts_again(record: JobRecord) -> str:
    """`starts_again` of a stopped job: from its newest verified checkpoint's step, as its
    stop recorded it (step 0 when its checkpoint store holds none: `steps.resume_step`)."""
    from costsched.service.jobs.steps import resume_step

    at = record.checkpoint_step
    if at is None:
        at = resume_step(None, record.checkpoint_location or "")
    return starts_again(record.id, at)


# The shell's exit codes of a command it could not run: not executable, not found.
COMMAND_NOT_RUN = (126, 127)
# The job file's key of what ran in each phase a job can fail in with an exit code: its
# setup (`setup`), else its command (`run`).
PHASE_KEYS = {"setup": "setup", "": "run"}


def failed_next(s: service.JobStatus) -> str:
    """How a failed job starts again, and from which step (`Failure.resumes_at`: its
    newest verified checkpoint's; 0 when it published none); '' for any other job, or one
    that failed before it was placed (nothing to start again). Its setup or its command
    are run as launched (`start` never reads the job file again: `--repack` packs its
    workdir alone): one that could not run at all, or a failed setup, is sent to the key
    of its file that ran, and to the launch that reads the file fixed."""
    if s.record.state != "failed" or s.failure is None or not s.record.checkpoint_location:
        return ""
    from costsched.service.jobs.launches import job_file, launch_again

    key = PHASE_KEYS.get(s.failure.phase)
    named = job_file(s.record)
    where = f"`{key}` in {named}" if named else f"`{key}` in its job file"
    what = "its setup" if key == "setup" else "its command"
    if key is not None and s.failure.exit_code in COMMAND_NOT_RUN:  # a start runs it again
        return (f"{what} (the job file's `{key}`, as launched) could not run (exit code "
                f"{s.failure.exit_code}): `costsched start {s.record.id}` runs the same "
                f"{'setup' if key == 'setup' else 'command'} again; fix {where}, then "
                f"{launch_again(s.record)}")
    code = (f", with the code it ran (`costsched start {s.record.id} --repack` packs its "
            "workdir again, as it is now)" if s.record.spec.get("code") else "")
    again = starts_again(s.record.id, s.failure.resumes_at, s.failure.resumes_inferred) + code
    if key == "setup":  # its setup as launched, whatever the file says now
        again += (f"; that runs its setup as launched: after a fix to {where}, "
                  f"{launch_again(s.record)}")
    return again


def starts_again(job_id: int, at: float | None, inferred: bool = False) -> str:
    """'`costsched start 5` starts it again from step 644, its newest verified
    checkpoint's' (`at`: that step; 0: it published none, or none past step 0, which
    resumes from the start as none would: `resumes_from_checkpoint`; None: not known;
    `inferred`: read off the time it was saved, 'from about step 644')."""
    from costsched.service.jobs.resumed_words import (
        FROM_NO_CHECKPOINT,
        READ_OFF_TIME,
        resumes_from_checkpoint,
    )

    where = ("from its newest verified checkpoint" if at is None else
             FROM_NO_CHECKPOINT if not resumes_from_checkpoint(at) else
             f"from about step {at:,.0f}, its newest verified checkpoint's, {READ_OFF_TIME}"
             if inferred else f"from step {at:,.0f}, its newest verified checkpoint's")
    return f"`costsched start {job_id}` starts it again {where}"
