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


def _live_processes() -> dict[int, ProcStat]:
    """Every live (not zombie) process, by pid: one read of the process table."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = proc_stat(int(entry.name))
            if stat is not None and stat.state != "Z":
                found[int(entry.name)] = stat
    return found


def group_members(pgid: int) -> dict[int, ProcStat]:
    """The live (not zombie) processes of a process group, by pid."""
    return {pid: stat for pid, stat in _live_processes().items() if stat.pgrp == pgid}


class GroupTable:
    """Which process groups have live processes, from one read of the process table made
    on the first question: many instances are answered for the price of one scan."""

    def __init__(self) -> None:
        self._groups: set[int] | None = None

    def has_members(self, pgid: int) -> bool:
        if self._groups is None:
            self._groups = {stat.pgrp for stat in _live_processes().values()}
        return pgid in self._groups
