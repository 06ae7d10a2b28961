"""A job's checkpoint location on this machine's disk (the local launcher's): checked
before the job is stored, so that a folder that cannot be made is one line naming the
file and field, from `plan` as from `launch`, not a job stored as failed."""

from __future__ import annotations

import os
from pathlib import Path

from costsched.jobspec import JobSpec
from costsched.spec_errors import as_written

ACCEPTED = "a folder this machine can write, or a bucket (s3://, gs://, az://)"


def refused_location(spec: JobSpec, source: str) -> str | None:
    """'FILE: field checkpoint.location: PATH: ...' when the job's own checkpoint location
    is a local folder that cannot be made or written here; None otherwise (no location of
    its own, a bucket, a folder that can be). The folders made to find out are removed."""
    location = spec.checkpoint.location
    if not location or ("://" in location and not location.startswith("file://")):
        return None
    path = Path(location.removeprefix("file://")).expanduser()
    why = _unwritable(path)
    if why is None:
        return None
    field = as_written("checkpoint.location", spec.task.sky)
    return f"{source}: field {field}: {location}: {why}; expected {ACCEPTED}"


def refused_root(spec: JobSpec, root: str | None, variable: str) -> str | None:
    """'setting launch.checkpoint_root ...: PATH: ...' when the job keeps its checkpoints
    under the configured root (no location of its own) and that root is a local folder
    that cannot be made or written here; None otherwise. `variable`: the environment
    variable that sets it, named in the line."""
    if spec.checkpoint.location or not root or (
            "://" in root and not root.startswith("file://")):
        return None
    why = _unwritable(Path(root.removeprefix("file://")).expanduser())
    if why is None:
        return None
    return (f"setting launch.checkpoint_root (the configuration file, or "
            f"{variable}): {root}: {why}; expected {ACCEPTED}")


def _unwritable(path: Path) -> str | None:
    made: list[Path] = []
    try:
        for folder in reversed([path, *path.parents]):
            if not folder.exists():
                folder.mkdir()
                made.append(folder)
            elif not folder.is_dir():
                return f"{folder} is a file, not a folder"
        if not os.access(path, os.W_OK | os.X_OK):
            return "cannot be written (permission denied)"
        return None
    except OSError as exc:
        return f"cannot be created ({exc.strerror})"
    finally:
        for folder in reversed(made):
            folder.rmdir()
