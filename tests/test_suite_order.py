"""The suite's order (tests/conftest.py): every long file it names to run first exists, once."""

from __future__ import annotations

from tests.conftest import LONG_FILES, ROOT


def test_every_long_file_named_exists_once() -> None:
    assert [f for f in LONG_FILES if not (ROOT / f).is_file()] == []
    assert len(set(LONG_FILES)) == len(LONG_FILES)
    assert all(f.startswith("tests/") and "/test_" in f for f in LONG_FILES)
