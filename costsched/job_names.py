"""Which stored jobs a name given on the command line picks: `status --name` takes a
pattern, `report --job` a job's name, a sweep's name (its jobs NAME-1, NAME-2, ...) or a
pattern, all matched alike here."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

_PATTERN = "*?["  # what makes a name a shell-style pattern


def name_matches(name: str, pattern: str) -> bool:
    """Whether a job's `name` matches `pattern` (shell-style, case-sensitive: 'resnet*')."""
    return fnmatch.fnmatchcase(name, pattern)


def is_pattern(asked: str) -> bool:
    """Whether `asked` is a pattern ('resnet*', 'fit-[12]') rather than a plain name."""
    return any(c in asked for c in _PATTERN)


def of_sweep(name: str, sweep: str) -> bool:
    """Whether a job's `name` is one a sweep named `sweep` gives its jobs ('sweep-3')."""
    base, dash, number = name.rpartition("-")
    return bool(dash) and base == sweep and number.isdigit()


def picks(name: str, asked: str) -> bool:
    """Whether a job named `name` is one `asked` picks: its name, its sweep's name, or a
    pattern it matches."""
    return name == asked or of_sweep(name, asked) or name_matches(name, asked)


def chosen_words(asked: str, jobs: Sequence[tuple[int, str]]) -> str:
    """The jobs `asked` picked (`jobs`: (id, name), oldest first), in words: 'job 3 (fit)'
    (by its id or its name alike), '2 jobs named fit', '3 jobs of sweep s (s-1, s-2,
    s-3)', "2 jobs matching 'fit-*' (fit-a, fit-b)"."""
    if len(jobs) == 1:
        return f"job {jobs[0][0]} ({jobs[0][1]})"
    names = list(dict.fromkeys(name for _, name in jobs))
    count = f"{len(jobs):,} jobs"
    if names == [asked]:
        return f"{count} named {asked}"
    shown = ", ".join(names) if len(names) <= 6 else \
        f"{', '.join(names[:3])}, ..., {names[-1]}"
    if all(of_sweep(n, asked) for n in names):
        return f"{count} of sweep {asked} ({shown})"
    return f"{count} matching {asked!r} ({shown})"
