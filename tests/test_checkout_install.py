"""The install the Makefile makes of a checkout: a script beside the checkout's folder
(itself named costsched, as `git clone` names it) imports the package, not the folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import costsched
print(costsched.__file__)
print(callable(getattr(costsched, "plan", None)))
"""


def test_a_script_beside_the_checkout_imports_the_package(tmp_path: Path) -> None:
    (tmp_path / "costsched").mkdir()  # the clone's folder: no __init__.py at its top
    (tmp_path / "costsched" / "README.md").write_text("a checkout\n")
    (tmp_path / "train_api.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "train_api.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    where, has_plan = done.stdout.split()
    assert Path(where).name == "__init__.py" and Path(where).parent.name == "costsched"
    assert Path(where).parent != tmp_path / "costsched"
    assert has_plan == "True"
