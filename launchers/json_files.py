"""Small JSON documents the launchers keep in files (an instance's record, a node's, the
local index): read as a dict, or {} when missing, half-written or not an object."""

from __future__ import annotations

import json
from pathlib import Path


def read_json(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}
