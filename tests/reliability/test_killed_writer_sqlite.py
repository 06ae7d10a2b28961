"""A `costsched prices import` killed with SIGKILL at many points of its batch, on SQLite:
the store is always either as it was before or complete, never in between, and importing
again completes it (tests/reliability/killed_writer.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.reliability.killed_writer import check_killed_imports


def test_a_killed_import_leaves_the_store_before_or_complete(fresh_url: Callable[[str], str],
                                                            dispa: Path,
                                                            tmp_path: Path) -> None:
    check_killed_imports("sqlite", fresh_url, dispa, tmp_path)
