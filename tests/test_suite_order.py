"""The suite's order (tests/conftest.py): every long file it names to run first exists, once;
and the Makefile's second pass (the `results` tests again) finds every such test's file."""

from __future__ import annotations

import re

import pytest

from tests.conftest import LONG_FILES, ROOT

RESULTS_MARK = re.compile(r"mark\.results")  # the Makefile's RESULTS_FILES: grep -E this


def test_every_long_file_named_exists_once() -> None:
    assert [f for f in LONG_FILES if not (ROOT / f).is_file()] == []
    assert len(set(LONG_FILES)) == len(LONG_FILES)
    assert all(f.startswith("tests/") and "/test_" in f for f in LONG_FILES)


def test_the_second_pass_finds_every_results_test(request: pytest.FixtureRequest) -> None:
    """Every test of this run marked `results` is in a file that names the mark (a whole
    run's, on any worker: each collects the whole suite)."""
    marked = {item.path for item in request.session.items if item.get_closest_marker("results")}
    assert [str(p) for p in marked if not RESULTS_MARK.search(p.read_text())] == []
    assert "mark\\.results" in (ROOT / "Makefile").read_text()
