"""The command line's collector: an everyday command ends before its first pass (the
libraries it loads are walked by none), and a long run has the usual passes after it."""

from __future__ import annotations

import json
import subprocess
import sys

# The collector's thresholds before main(), as the command sees them, then after the
# collector's first pass; in a fresh interpreter (main() sets the collector for its process).
PROBE = """
import gc, json, sys
from costsched import cli
seen = [gc.get_threshold()]
def command():
    seen.append(gc.get_threshold())
    gc.collect(0)  # as the first pass a long run reaches
    seen.append(gc.get_threshold())
cli.app = command
cli.main()
print(json.dumps(seen))
"""


def test_the_first_pass_waits_then_the_usual_passes_run() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True)
    (usual, _, _), (young, middle, full), after = json.loads(out.stdout)
    assert young >= 300_000  # more objects than an everyday command makes
    assert after == [usual, middle, full]  # Python's young passes again
    assert full > 10  # full passes stay rare
