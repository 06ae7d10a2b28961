"""The newest schema revision, read from the revision files themselves (not through
alembic): the one revision no other one revises. Tests compare a store with it, so they
need no change when a revision is added."""

from __future__ import annotations

import re
from pathlib import Path

VERSIONS = Path(__file__).parents[3] / "costsched" / "store" / "revisions" / "versions"


def newest_revision() -> str:
    revises: dict[str, str | None] = {}
    for path in VERSIONS.glob("*.py"):
        text = path.read_text()
        rev = re.search(r'^revision\s*=\s*"([^"]+)"', text, re.M)
        down = re.search(r'^down_revision\s*=\s*(?:"([^"]+)"|None)', text, re.M)
        assert rev and down, f"{path.name}: no revision or down_revision"
        revises[rev.group(1)] = down.group(1)
    heads = set(revises) - {d for d in revises.values() if d}
    assert len(heads) == 1, f"the revisions have {len(heads)} heads: {sorted(heads)}"
    return heads.pop()
