"""What the tests' small job scripts share: their checkpoint directory, made, and
`report(step)`, which writes the step to the progress file as the job contract says (a
whole file, renamed into place)."""

PREAMBLE = """\
import os, sys, time
from pathlib import Path
saved = Path(os.environ["COSTSCHED_CHECKPOINT_DIR"])
saved.mkdir(parents=True, exist_ok=True)
def report(step):
    target = os.environ["COSTSCHED_PROGRESS_FILE"]
    Path(target + ".tmp").write_text(f"{step}\\n")
    os.replace(target + ".tmp", target)
"""
