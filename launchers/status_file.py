"""An instance's status file, WORKDIR/status.json: what its agent (or its boot, when the
agent never started) says of the job, written atomically for the launcher to read."""

from __future__ import annotations

import json
import os
from pathlib import Path

STATUS = "status.json"


def write_status(workdir: Path, status: dict) -> None:
    """WORKDIR/status.json, atomically (temp file, fsync, rename)."""
    temp = workdir / (STATUS + ".tmp")
    with temp.open("w") as handle:
        json.dump(status, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, workdir / STATUS)
