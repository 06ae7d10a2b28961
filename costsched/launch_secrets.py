"""A job's secrets, given at launch: held by the process that was given them, never stored.

A SkyPilot task names its secrets (`secrets: {HF_TOKEN: }`); their values come with the
launch (`costsched launch --secret HF_TOKEN=...` or `--secret HF_TOKEN` from the caller's
environment) and live only in this process's memory, masked in everything costsched prints
or logs (costsched.redact). The job process receives them as environment variables. A
later process that starts one of the job's instances (a recovery, a move, `costsched
start`, the daemon) takes each value from its own environment under the secret's name, and
refuses the launch naming the secret when it has none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from costsched import redact
from costsched.model import InvalidInput
from costsched.vocabulary import did_you_mean

_GIVEN: dict[int, dict[str, str]] = {}  # job id -> name -> value, this process only


def check(names: Sequence[str], given: Mapping[str, str], where: str,
          envs: Sequence[str] = ()) -> dict[str, str]:
    """The values of the job's secrets `names` from `given`; InvalidInput for a value given
    for a secret the job does not name, else one line naming every env (`envs`: the task's
    envs still without a value) and secret not given, with the options that give them,
    else naming the first secret given empty."""
    extra = sorted(set(given) - set(names))
    if extra:
        raise InvalidInput(f"{where}: field secrets: {extra[0]!r} is given at launch but "
                           "the task names no such secret; expected one of "
                           + (", ".join(names) or "(none)") + did_you_mean(extra[0], names))
    missing = [n for n in names if n not in given]
    if missing or envs:
        raise InvalidInput(not_given(where, envs, missing))
    empty = [n for n in names if not given[n]]
    if empty:  # `--secret NAME=` or an unset variable's expansion: never a real secret
        raise InvalidInput(f"{where}: field secrets.{empty[0]} is given empty: give its value "
                           f"(--secret NAME=VALUE), or set {empty[0]} in your environment "
                           f"and give --secret {empty[0]}")
    redact.remember(given.values())
    return {n: given[n] for n in names}


def not_given(where: str, envs: Sequence[str], secrets: Sequence[str]) -> str:
    """One line naming every env and secret a launch was not given, and the options that
    give them all at once: '--env EPOCHS=VALUE --secret HF_TOKEN'."""
    fields = [f"envs.{n}" for n in envs] + [f"secrets.{n}" for n in secrets]
    options = [f"--env {n}=VALUE" for n in envs] + [f"--secret {n}" for n in secrets]
    one = len(fields) == 1
    return (f"{where}: field{'' if one else 's'} {', '.join(fields)} "
            f"{'is' if one else 'are'} not given: give {'it' if one else 'them'} at launch "
            f"with {' '.join(options)} (NAME=VALUE gives a value, NAME alone takes it from "
            "your environment)")


def keep(job_id: int, values: Mapping[str, str]) -> None:
    """Hold a launched job's secrets for the instances this process starts for it."""
    if values:
        _GIVEN[job_id] = dict(values)


def values(job_id: int, names: Sequence[str], job: str) -> dict[str, str]:
    """The job's secrets for an instance: as given at launch in this process, else from
    this process's environment; InvalidInput naming the first that neither has."""
    held = _GIVEN.get(job_id, {})
    out = {}
    for name in names:
        value = held.get(name, os.environ.get(name))
        if value is None:
            raise InvalidInput(f"job {job}: secret {name} has no value in this process: set "
                               f"{name} in its environment to start the job's instance")
        out[name] = value
    redact.remember(v for v in out.values() if v)
    return out


def held() -> dict[str, str]:
    """Every secret this process holds for its jobs, by name, for a process it starts to
    look after them (the supervisor gets them in its environment, as `values` reads them);
    a name held with two different values is left out (each job's own is then needed)."""
    out: dict[str, str] = {}
    clash: set[str] = set()
    for given in _GIVEN.values():
        for name, value in given.items():
            if out.get(name, value) != value:
                clash.add(name)
            out[name] = value
    return {k: v for k, v in out.items() if k not in clash}
