"""The newest schema revision of the store, read from the revision files with the standard
library: a command checks that a store is current without loading Alembic (a third of a
second), and the quick readers (`costsched.service.glance`) that the tables they read
are the ones they know."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

VERSION_TABLE = "alembic_version"  # where Alembic keeps a database's revision
_VERSIONS = Path(__file__).parent / "store" / "revisions" / "versions"
_LINE = re.compile(r'^(down_revision|revision) = (None|"[^"]+")$', re.M)


@cache
def newest_revision() -> str | None:
    """The revision no other revises, as the revision files write it (`revision = "0010"`,
    `down_revision = "0009"`); None where they are not one plain chain (a merge, another
    spelling): Alembic then says."""
    revises: dict[str, str | None] = {}
    for script in _VERSIONS.glob("*.py"):
        if script.name.startswith("__"):
            continue
        fields = {k: v.strip('"') for k, v in _LINE.findall(script.read_text())}
        if set(fields) != {"revision", "down_revision"} or fields["revision"] in revises:
            return None
        down = fields["down_revision"]
        revises[fields["revision"]] = None if down == "None" else down
    heads = set(revises) - set(revises.values())
    return heads.pop() if len(heads) == 1 else None
