"""Where the recorded data tests and benchmarks read lives (never the package): the
directory COSTSCHED_SHARED_DATA names, else `shared/data` beside this checkout, else beside
the local checkout this one was cloned from (a fresh clone, as CI makes)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shared_data() -> Path:
    if os.environ.get("COSTSCHED_SHARED_DATA"):
        return Path(os.environ["COSTSCHED_SHARED_DATA"])
    beside = ROOT.parent / "shared" / "data"
    if beside.is_dir():
        return beside
    origin = subprocess.run(["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
                            capture_output=True, text=True).stdout.strip()
    cloned_from = Path(origin).parent / "shared" / "data" if origin else None
    return cloned_from if cloned_from is not None and cloned_from.is_dir() else beside
