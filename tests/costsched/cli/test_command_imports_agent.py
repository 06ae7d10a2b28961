"""What the everyday commands leave unloaded of the machinery they do not run, on a store
like the demo's (its prices and a finished local job): `status` of finished jobs loads
neither the local agent's modules (its recovery, its containers) nor the migration machine
nor the decider's stored decisions; `report` loads none of a job's moves or stops; a launch
with the supervisor's autostart off loads neither the agent's module (its job's
running state is read without it) nor the supervisor.
Each runs in a fresh interpreter (`test_command_imports.run`)."""

from __future__ import annotations

from pathlib import Path

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


def test_a_local_launch_loads_neither_the_agent_nor_the_supervisor(env: dict[str, str],
                                                                    tmp_path: Path) -> None:
    home = Path(env["HOME"])
    db = tmp_path / "store.sqlite"  # the launch adds a job: to a copy of the store
    db.write_bytes(Path(env["COSTSCHED_DB"]).read_bytes())
    (home / "quick.yaml").write_text("name: quick\nrun: 'true'\nthroughputs: {V100: 1.0}\n"
                                     "steps: 10\nconstraints: {regions: [us-east-1]}\n")
    own = {**env, "COSTSCHED_DB": str(db), "COSTSCHED_INSTANCES": str(tmp_path / "instances")}
    codes, err, loaded = run([["launch", "quick.yaml"]], own,
                             watched=("launchers.local", "launchers.agent",
                                      "costsched.daemon.supervisor",
                                      "costsched.daemon.scheduler"))
    assert codes == [0], err
    assert loaded == ["launchers.local"], loaded  # the probe sees the launcher it used
