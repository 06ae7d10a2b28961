"""Crash safety of the job-move state machine, in the later states of a migration
(tests/costsched/migration/crashed_moves.py; the first ones: test_machine.py)."""

from __future__ import annotations

import pytest

from tests.costsched.migration.crashed_moves import STATES, check_crash_resumed
from tests.costsched.migration.test_machine import FIRST
from tests.costsched.service.test_jobs import uninterrupted, world  # noqa: F401 - the fixture


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The weights of the job run without interruption (the same for every case)."""
    return uninterrupted(tmp_path_factory.mktemp("uninterrupted"))


@pytest.mark.parametrize("crash_at", STATES[len(FIRST):])
def test_a_crash_in_a_later_state_of_a_migration_resumes_it(world, expected: bytes,  # noqa: F811
                                                            crash_at: str) -> None:
    check_crash_resumed(world, expected, crash_at)
