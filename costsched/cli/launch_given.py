"""What `costsched launch` and `start` are given for a SkyPilot task's envs and secrets
(`--env`, `--secret`): NAME=VALUE, or NAME alone for the value of NAME in the caller's
environment. A NAME given alone that the environment does not set is held as None until
the task has said whether it misspells one of its own names (`skypilot.parse_task`), then
refused with every other such name in one line (`refuse_unset`)."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from costsched.jobspec import ENV_NAME_FORM, is_env_name
from costsched.launch_secrets import listed, not_set
from costsched.model import InvalidInput
from costsched.redact import is_secret_name

if TYPE_CHECKING:
    from costsched.jobspec import JobSpec


def given(envs: list[str] | None, secrets: list[str] | None
          ) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """(envs, secrets) by name, None for a NAME given alone that the environment does not
    set; InvalidInput naming a malformed item."""
    return _items("--env", envs), _items("--secret", secrets)


def refuse_unset(envs: dict[str, str | None], secrets: dict[str, str | None]
                 ) -> tuple[dict[str, str], dict[str, str]]:
    """(envs, secrets) with their values; InvalidInput naming every NAME given alone that
    the environment does not set, in one line, else the first secret given empty or too
    short to be masked, of the option (`launch_secrets.refuse_given`): the value came from
    it, not from the task's file."""
    unset = [f"{option} {name}" for option, given_ in (("--env", envs), ("--secret", secrets))
             for name, value in given_.items() if value is None]
    if unset:
        raise InvalidInput(not_set(unset))
    from costsched.launch_secrets import refuse_given

    values = {k: v for k, v in secrets.items() if v is not None}
    refuse_given(values, launching=True)
    return {k: v for k, v in envs.items() if v is not None}, values


def env_note(names: Iterable[str]) -> str | None:
    """The note a launch prints for the --env `names` that read like a secret's (the one
    rule of what costsched masks: `redact.is_secret_name`): an env's value is stored with
    the job (a recovery needs it without the launching shell), a secret's never is. None
    when no name reads so."""
    like = [n for n in names if is_secret_name(n)]
    if not like:
        return None
    one = len(like) == 1
    return (f"note: {listed(like)} {'is' if one else 'are'} stored with the job like "
            "every env; a secret given with --secret never is (name "
            f"{'it' if one else 'them'} under the task's secrets:)")


def written_env_warnings(read: Iterable[tuple[str, JobSpec]],
                         given: Collection[str] = ()) -> list[str]:
    """A warning's text (`say_warning` prints it) for each file of `read` ((source, spec)
    pairs) whose envs give a value to a name that reads like a secret's (`env_note`'s
    rule): stored with the job in plain text, as every env's value is. It names the file
    and the envs, never a value. `given`: the names --env gives (`env_note` says those)."""
    named: dict[str, list[str]] = {}
    for source, spec in read:
        for name, value in spec.envs.items():
            if value and name not in given and is_secret_name(name):
                named.setdefault(source, []).append(name)
    out = []
    for source, names in named.items():
        names = list(dict.fromkeys(names))  # (a sweep's jobs share their file's)
        what = (f"envs.{names[0]} is named like a secret, and its value is" if len(names) == 1
                else f"envs {listed(names)} are named like secrets, and their values are")
        out.append(f"{source}: {what} stored with the job in plain text; move "
                   f"{'it' if len(names) == 1 else 'them'} under secrets: (given at launch "
                   "with --secret, never stored)")
    return out


def local_mount_warnings(read: Iterable[tuple[str, JobSpec]], instances: Path) -> list[str]:
    """A warning's text (`say_warning` prints it) for each file mount of `read` ((source,
    spec) pairs), for the local launcher: it places every mount under the instance's
    folder in `instances` (launchers.mounts.local_note), never at the mount's own path,
    which the job then finds empty; the job reaches it through $COSTSCHED_MOUNTS (that
    folder, '' where mounts are at their own paths)."""
    from launchers.mounts import as_the_job_reads

    out: list[str] = []
    for source, spec in read:
        for mount in spec.task.mounts:
            inside = instances / "JOB-ATTEMPT" / "mounts" / mount.path.lstrip("/")
            line = (f"{source}: file_mounts {mount.path}: the local launcher does not "
                    f"place it at {mount.path} but under its instance's folder ({inside}); "
                    f"the job reads it as {as_the_job_reads(mount.path)}, which is "
                    f"{mount.path} on a cloud (a job reading {mount.path} finds nothing there)")
            if line not in out:  # (a sweep's jobs share their file's)
                out.append(line)
    return out


def _items(option: str, items: list[str] | None) -> dict[str, str | None]:
    """NAME=VALUE items of `option`; NAME alone takes the value from the environment (None
    where it is not set)."""
    out: dict[str, str | None] = {}
    for item in items or []:
        name, eq, value = item.partition("=")
        if not is_env_name(name):  # (worded so that no value follows --secret: redact)
            raise InvalidInput(f"{option} NAME=VALUE: {name!r} is not an environment "
                               f"variable name ({ENV_NAME_FORM}); expected NAME=VALUE or NAME")
        out[name] = value if eq else os.environ.get(name)
    return out
