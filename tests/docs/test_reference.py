"""The job-YAML and configuration references in docs/ are the ones the models give: a key
added to JobSpec or Config without its text, or a default changed, fails here until
scripts/gen_reference.py is run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_references_are_current() -> None:
    done = subprocess.run([sys.executable, "scripts/gen_reference.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_every_key_of_the_models_is_in_the_references() -> None:
    from costsched.config import KEYS
    from costsched.jobspec import JobSpec

    config = (ROOT / "docs" / "reference" / "configuration.md").read_text()
    assert all(f"| `{key}` |" in config for key in KEYS)
    jobs = (ROOT / "docs" / "reference" / "job-yaml.md").read_text()
    assert all(f"| `{key}` |" in jobs for key in JobSpec.model_fields)
    assert "| `constraints.max_price` | number (optional) | none |" in jobs
