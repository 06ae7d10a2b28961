"""How large a file costsched parses may be, checked before a byte of it is parsed.

A parser's time and memory grow with its input: a 50 MB task file took 81 s and 627 MB
before its first error. Each kind of file gets a limit well above any real one of its
kind, set by a configuration key (`[files]`), and a file over it is refused in one line
naming the file, its size, the limit and the key. The configuration file's own limit is
fixed: it cannot be set by the file it bounds.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from costsched.model import InvalidInput

MB = 1_000_000


@dataclass(frozen=True)
class FileKind:
    what: str  # "a task file", as the refusal says it
    key: str  # the configuration key of its limit ('' where none can be set)
    default_mb: float


# A task file is a job's fields and a run script: real ones are a few KB (a sweep's values
# included). 1 MB leaves room for a long inline script, and YAML parses it in well under
# a second.
TASK = FileKind("a task file", "files.task_mb", 1.0)
# A configuration file of every key with long values is a few KB.
CONFIG = FileKind("a config file", "", 1.0)
# `prices import` files may be large: an export of years of prices of every cloud (about
# 100 bytes an observation: 10 million observations per GB), a spot history page of a busy
# region, a long spot trace. 1 GB per file keeps the parse within a few GB of memory; a
# larger history is split into files (an export per year, a folder per region).
IMPORT = FileKind("an imported price or availability file", "files.import_mb", 1000.0)
# Risk signal documents: the Spot Instance Advisor's document, the largest, is about 3 MB.
SIGNALS = FileKind("a risk signal document", "files.signals_mb", 100.0)
# Throughput tables: a row per model, GPU and count (the bundled one is 30 KB).
THROUGHPUTS = FileKind("a throughput table", "files.throughputs_mb", 10.0)


def problem(path: str | Path, kind: FileKind, limit_mb: float | None = None) -> str | None:
    """The one line refusing `path` when it is a regular file larger than `limit_mb`
    (default: the kind's default), else None. A path that cannot be looked at, or is not a
    regular file, is left to its reader to report."""
    limit = kind.default_mb if limit_mb is None else limit_mb
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(found.st_mode) or found.st_size <= limit * MB:
        return None
    setting = f" (config key {kind.key})" if kind.key else ""
    size = (f"{found.st_size / MB:,.1f} MB" if found.st_size >= MB / 10
            else f"{found.st_size:,} bytes")
    return f"{path}: {size}, over the {limit:g} MB limit of {kind.what}{setting}"


def check(path: str | Path, kind: FileKind, limit_mb: float | None = None) -> None:
    """InvalidInput (`problem`) when `path` is over its kind's limit."""
    found = problem(path, kind, limit_mb)
    if found is not None:
        raise InvalidInput(found)
