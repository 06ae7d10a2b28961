"""examples/train.py at a pace a test sets: `python paced.py PACE_FILE train.py ARGS...`
runs train.py with ARGS, each of its `--step-seconds` sleeps kept only while PACE_FILE is
missing or names this instance (its folder under the local launcher's instances); once
the file exists without naming it, the instance trains at full speed. The steps, and so
the weights, are train.py's own: only the sleeps between them are skipped."""

from __future__ import annotations

import os
import runpy
import sys
import time
from pathlib import Path

PACE_FILE = Path(sys.argv[1])
# The agent runs the job in <instance folder>/code and names its progress file there.
ME = Path(os.environ.get("COSTSCHED_PROGRESS_FILE") or Path.cwd().parent / "p").parent.name
_sleep = time.sleep


def paced_sleep(seconds: float) -> None:
    try:
        keep = ME in PACE_FILE.read_text().split()
    except FileNotFoundError:
        keep = True
    if keep:
        _sleep(seconds)


time.sleep = paced_sleep
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
