"""What the everyday commands leave unloaded of the machinery they do not run, on a store
like the demo's (its prices and a finished local job): `status` of finished jobs loads
neither the local agent's modules (its recovery, its containers) nor the migration machine
nor the decider's stored decisions; `report` loads none of a job's moves or stops (what a
launch loads: `test_command_imports`). Each runs in a fresh interpreter
(`test_command_imports.run`)."""

from __future__ import annotations

from tests.costsched.cli.test_command_imports import env, run

__all__ = ["env"]  # the store's fixture, shared

AGENT = ("launchers.agent", "launchers.agent_recovery", "launchers.containers")
MOVES = ("costsched.migration.machine", "costsched.service.jobs.steps",
         "costsched.service.jobs.halt")


def test_status_of_finished_jobs_loads_no_agent_or_mover(env: dict[str, str]) -> None:
    codes, err, loaded = run([["status"], ["status", "hello"]], env,
                             watched=("sqlalchemy", *AGENT, "costsched.migration.machine",
                                      "costsched.store.decisions"))
    assert codes == [0, 0], err
    assert loaded == ["sqlalchemy"], loaded  # the probe sees the store


def test_report_loads_no_move_or_stop(env: dict[str, str]) -> None:
    codes, err, loaded = run([["report"]], env, watched=("sqlalchemy", *AGENT, *MOVES))
    assert codes == [0], err
    assert loaded == ["sqlalchemy"], loaded

