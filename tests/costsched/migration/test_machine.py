"""Crash safety of the job-move state machine, in the first states of a migration
(tests/costsched/migration/crashed_moves.py; the later ones: test_machine_late.py)."""

from __future__ import annotations

import pytest

from tests.costsched.migration.crashed_moves import STATES, check_crash_resumed
from tests.costsched.service.test_jobs import uninterrupted, world  # noqa: F401 - the fixture

FIRST = STATES[:2]  # the two longest cases: the resumed move has its every step ahead


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The weights of the job run without interruption (the same for every case)."""
    return uninterrupted(tmp_path_factory.mktemp("uninterrupted"))


@pytest.mark.parametrize("crash_at", FIRST)
def test_a_crash_in_any_state_of_a_migration_resumes_it(world, expected: bytes,  # noqa: F811
                                                        crash_at: str) -> None:
    check_crash_resumed(world, expected, crash_at)
