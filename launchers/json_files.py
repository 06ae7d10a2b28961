"""Small JSON documents the launchers keep in files (an instance's record, a node's, the
local index): read as a dict, or {} when missing, half-written or not an object; written
whole or not at all."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path


def read_json(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def write_json(path: Path, doc: dict) -> None:
    """`doc` in `path`, replaced at once. A temporary name of this writer's own: two
    writers (a launch, and a listing that adopts its agent) never rename each other's file
    away."""
    temp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temp.write_text(json.dumps(doc, indent=1))
    os.replace(temp, path)
