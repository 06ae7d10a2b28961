"""A launch loads what its path uses: a job without a deadline loads neither the deadline
policies' live machinery nor the booked capacity's, nor the planner's view of `plan`
(the job files are read by the task reader itself). In a fresh interpreter: what a command
imports is only seen there."""

from __future__ import annotations

from pathlib import Path

from tests.costsched.cli.test_command_imports import env, run  # noqa: F401 - env: fixture

# What a launch of a job without a deadline, given no --book, never uses.
UNUSED = ("costsched.service.plan", "costsched.service.deadline_jobs",
          "costsched.service.booked_jobs", "costsched.decide.booked",
          "costsched.optimize.booked")


def test_a_launch_without_a_deadline_loads_no_deadline_booking_or_plan_view(
        env: dict[str, str], tmp_path: Path) -> None:  # noqa: F811 - the fixture
    home = Path(env["HOME"])
    db = tmp_path / "store.sqlite"  # the launch adds a job: to a copy of the store
    db.write_bytes(Path(env["COSTSCHED_DB"]).read_bytes())
    (home / "plain.yaml").write_text("name: plain\nrun: 'sleep 600'\n"
                                     "throughputs: {V100: 1.0}\nsteps: 10\n"
                                     "constraints: {regions: [us-east-1], budget: 100}\n")
    own = {**env, "COSTSCHED_DB": str(db), "COSTSCHED_INSTANCES": str(tmp_path / "instances")}
    codes, err, loaded = run([["launch", "plain.yaml", "--wait", "0"]], own, watched=UNUSED)
    from launchers.local import LocalLauncher

    for instance in LocalLauncher(tmp_path / "instances").instances():
        LocalLauncher(tmp_path / "instances").terminate(instance.id)
    assert codes == [0], err
    assert loaded == [], loaded
