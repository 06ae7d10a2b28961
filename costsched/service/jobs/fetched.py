"""A job's newest verified checkpoint copied to a folder of the user's: its outputs (what
the job wrote beside its checkpoints: a model, a final map, its logs), from whichever
checkpoint store it used, as a start restores it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from costsched.model import InvalidInput
from costsched.service.jobs.runs import job_ids
from costsched.store import PriceStore


@dataclass(frozen=True)
class Fetched:
    """What `fetch` copied: the job, the checkpoint's version and step (None: not known;
    `step_inferred`: read off the time it was saved, a floor), the folder and the files in
    it (relative paths, sorted)."""

    job_id: int
    name: str
    version: int
    step: int | None
    step_inferred: bool
    folder: Path
    files: tuple[str, ...]


def fetch(store: PriceStore, job: int | str, folder: str | Path) -> Fetched:
    """Copy job `job`'s newest verified checkpoint into `folder` (new, or empty: nothing
    of the user's is overwritten), every file checked against its manifest."""
    job_id = job_ids(store, job, states=())[0]
    record = store.jobs.get(job_id)
    dest = Path(folder).expanduser()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InvalidInput(f"{folder}: not an empty folder: expected a new or empty folder "
                           "(nothing in it is overwritten)")
    if not record.checkpoint_location:
        raise InvalidInput(f"job {job_id} ({record.name}): no checkpoint store: nothing to "
                           "fetch")
    from launchers import version_steps
    from launchers.checkpoints import open_store
    from launchers.progress_readings import saved_step
    from launchers.publisher import COMMIT, restore

    made = not dest.exists()
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"{folder}: cannot make the folder ({exc.strerror})") from None
    version = restore(open_store(record.checkpoint_location), dest).version
    if version is None:
        if made:
            dest.rmdir()
        raise InvalidInput(f"job {job_id} ({record.name}): no verified checkpoint yet: "
                           "nothing to fetch")
    files = tuple(sorted(str(p.relative_to(dest)) for p in dest.rglob("*")
                         if p.is_file() or p.is_symlink()))
    said = saved_step(dest / COMMIT)  # its marker's step, else the one its agent kept
    step, inferred = ((said, False) if said is not None
                      else version_steps.of(record.checkpoint_location, version))
    return Fetched(job_id, record.name, version, step, inferred, dest, files)
