"""The code a `start` runs: the archive packed at the job's launch (every instance of the
job runs it, recoveries and moves included), or with `--repack` the job's workdir packed
again as it is now (a bug fixed since), stored beside its checkpoints before the job is
started and its code from then on; the one line that says which; and the note that the
job's file now gives other commands than its launch stored (which a start runs all the
same: `--repack` packs the workdir's files, not the file's `setup` and `run`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from costsched import launch_secrets
from costsched.model import InvalidInput
from costsched.service.jobs.steps import _store_code
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord

REPACKED_AT = "repacked_at"  # beside the archive's fields: when a start packed it again
SHOWN_SHA = 12  # the archive's SHA-256 as the line shows it


def repacked(record: JobRecord, checkpoint_uri: str, job_file: str, at: datetime) -> dict:
    """The job's workdir packed again now and stored beside its checkpoints (as a launch
    packs it: the same limits and refusals; `job_file`, its file, and the values of its
    secrets held for this start kept out), as its stored spec keeps it; InvalidInput in
    one line, nothing changed, for a job whose file names no workdir or whose workdir
    cannot be packed."""
    from launchers.codepack import pack_workdir

    where = f"job {record.id} ({record.name})"
    workdir = (record.spec.get("spec") or {}).get("workdir")
    if not workdir:
        raise InvalidInput(f"{where}: --repack: its file names no workdir, so no code was "
                           "packed at its launch; its command runs on each instance as it is")
    written = list(launch_secrets.held_for(record.id).values())  # held for this start
    code = pack_workdir(str(workdir), f"{where}: --repack", job_file, written)
    if code is None:  # (a workdir packs to an archive or is refused)
        raise InvalidInput(f"{where}: --repack: its workdir {workdir} packed nothing")
    _store_code(code, checkpoint_uri)
    return {**code, REPACKED_AT: at.isoformat()}


def keep_repacked(store: PriceStore, record: JobRecord, code: dict, at: datetime) -> None:
    """The job runs `code` (`repacked`) from now on: its recoveries and moves too."""
    store.jobs.repack(record.id, code, at=at,
                      detail=f"code packed again from {record.spec['spec'].get('workdir')} "
                             f"(sha256 {code['sha256']})")


def code_line(record: JobRecord, repack: bool) -> str:
    """Which code the start of `record` runs, in one line: its workdir packed again now
    (`repack`), the code packed at its launch, or at an earlier start with --repack."""
    code = record.spec.get("code") or {}
    workdir = (record.spec.get("spec") or {}).get("workdir")
    if not code:
        return "code: none packed (its file names no workdir): its command runs as it is"
    sha = str(code.get("sha256", ""))[:SHOWN_SHA]
    if repack:
        return f"code: its workdir {workdir} packed again now (sha256 {sha})"
    when = code.get(REPACKED_AT)
    packed = (f"the code packed again at its start of {_minute(when)} UTC" if when else
              "the code packed at its launch")
    return (f"code: {packed} (sha256 {sha}), not its workdir as it is now (`--repack` "
            "packs it again)")


def _minute(iso: str) -> str:
    return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M")


COMMANDS = ("setup", "run")  # what a job's file gives that a start takes from its launch


def edited_since_launch(job_id: int, name: str, stored: Mapping) -> str:
    """A note when the job's file (`stored`: its stored spec) now gives another `setup` or
    `run` than its launch stored: a start runs the stored ones, `--repack` or not; '' when
    they are the same, or when the file is gone or no longer reads as a job of that name
    (nothing to compare)."""
    from costsched.taskfile import load

    path = str(stored.get("source_path") or "")
    then = stored.get("spec") or {}
    if not path:
        return ""
    try:
        now = {spec.name: spec for spec in load(path)}.get(name)
    except (InvalidInput, OSError):
        return ""
    changed = [key for key in COMMANDS
               if now is not None and (getattr(now, key) or "") != (then.get(key) or "")]
    if not changed:
        return ""
    return (f"note: {path} now gives another {' and '.join(f'`{k}`' for k in changed)} "
            f"than job {job_id}'s launch stored; a start runs the stored one (--repack packs "
            f"the workdir's files, not the file's commands); `costsched launch {path}` runs "
            "the file as it is now, as a new job")
