"""What `plan` and `launch` say of a job whose `setup` installs Python packages with pip on
the local launcher: its instance is this machine, and its `python` and `pip` are the
interpreter costsched runs on (`launchers.local_env.instance_environment` puts its folder
first on PATH), so the install changes costsched's own environment. A job in a Docker
image installs in its container instead, and a cloud instance in its own environment."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# `pip install`, `pip3 install`, `python -m pip install`, `uv pip install`.
PIP_INSTALL = re.compile(r"\bpip3?(?:\.exe)?\s+install\b")


def local_setup_notes(read: Iterable[tuple[str, Any]], python: str) -> list[str]:
    """A note for each file of `read` ((source, spec) pairs) whose setup runs pip install
    outside a Docker image, on the local launcher whose interpreter is `python`."""
    out: list[str] = []
    for source, spec in read:
        if spec.task.docker_image or not PIP_INSTALL.search(spec.setup or ""):
            continue
        line = (f"note: {source}: setup runs on this machine, in {python}: its pip install "
                "changes the environment costsched runs from (for one of the job's own: "
                "`python -m venv .venv && .venv/bin/pip install ...` in setup, "
                "`.venv/bin/python` in run)")
        if line not in out:  # (a sweep's jobs share their file's)
            out.append(line)
    return out
