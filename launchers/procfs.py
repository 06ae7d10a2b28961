"""Processes as Linux's /proc shows them: enough to tell a live process group, and one
process for good (its pid with its start time), from a reused pid. Where /proc is missing,
callers fall back to signals."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProcStat:
    state: str  # R, S, D, Z...
    pgrp: int
    start_time: int  # clock ticks after boot: with the pid, names one process for good


def proc_stat(pid: int) -> ProcStat | None:
    """The process's /proc/<pid>/stat fields that matter here; None if there is none."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    fields = raw[raw.rindex(")") + 2:].split()  # comm may hold spaces and parentheses
    return ProcStat(state=fields[0], pgrp=int(fields[2]), start_time=int(fields[19]))


def has_proc() -> bool:
    return Path("/proc/self/stat").exists()


def group_members(pgid: int) -> dict[int, ProcStat]:
    """The live (not zombie) processes of a process group, by pid."""
    members = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = proc_stat(int(entry.name))
            if stat is not None and stat.pgrp == pgid and stat.state != "Z":
                members[int(entry.name)] = stat
    return members
