"""The jobs one file made at one launch (a sweep's, or a file of several jobs), kept with
each of them: `costsched launch FILE` launches them all again, and the hint that names it
for one of them says so, with how to run that one alone."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costsched.jobspec import JobSpec

# In a launched job's stored spec: {"names": [the file's jobs], "values": {env: value}},
# the values the job's own envs give where the file's jobs differ (a sweep's values).
FILE_JOBS = "file_jobs"


def file_jobs(read: Iterable[tuple[str, JobSpec]]) -> dict[str, dict]:
    """By job name, what FILE_JOBS keeps for a job whose file made more than one job at
    this launch (`read`: (source, spec) pairs, a sweep already expanded)."""
    by_source: dict[str, list[JobSpec]] = {}
    for source, spec in read:
        if source and not source.startswith("<"):  # a spec in no file: not launched again
            by_source.setdefault(source, []).append(spec)
    out: dict[str, dict] = {}
    for specs in by_source.values():
        if len(specs) < 2:
            continue
        names = sorted({k for s in specs for k in s.envs})
        varying = [k for k in names if len({str(s.envs.get(k)) for s in specs}) > 1]
        for spec in specs:
            out[spec.name] = {"names": [s.name for s in specs],
                              "values": {k: str(spec.envs.get(k)) for k in varying
                                         if k in spec.envs}}
    return out


def all_of_them(name: str, kept: Mapping | None) -> tuple[str, str] | None:
    """For a launch hint of job `name` whose file made several jobs (`kept`: its
    FILE_JOBS): (what a launch of the file runs, how to run `name` alone); None for a job
    alone in its file (or launched before this was kept)."""
    names = list((kept or {}).get("names") or [])
    if len(names) < 2:
        return None
    values = dict((kept or {}).get("values") or {})
    sweep = _sweep_base(names)
    given = ", ".join(f"{k}: {v}" for k, v in values.items())
    what = (f"all {len(names)} jobs of its sweep {sweep} ({names[0]}..{len(names)})"
            if sweep else f"all {len(names)} jobs of that file ({', '.join(names)})")
    alone = (f"a copy of the file without its sweep: and with {given} under envs:"
             if sweep and given else "a copy of the file that holds only its job")
    return what, f"to run only {name}, launch {alone}"


def _sweep_base(names: list[str]) -> str | None:
    """The sweep's name when `names` are a sweep's jobs (NAME-1 .. NAME-N), else None."""
    found = [re.fullmatch(r"(.+)-(\d+)", n) for n in names]
    if not all(found):
        return None
    bases = {m.group(1) for m in found if m}
    numbers = [int(m.group(2)) for m in found if m]
    return bases.pop() if len(bases) == 1 and numbers == list(range(1, len(names) + 1)) \
        else None
