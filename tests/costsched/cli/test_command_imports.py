"""The everyday commands load only the libraries their answer needs, on a store like the
demo's (its prices and a finished local job): a job file refused at parsing loads neither
pandas, the database layer nor the planner; `gpus` reads the store with sqlite3;
`status`, `report` and `plan` load neither the solver, SciPy, matplotlib nor Alembic (the
store is at the newest revision), nor the daemon's scheduler (APScheduler) or the
backtests' replays; `daemon status` and a launch on this machine load no cloud's SDK,
launcher or checkpoint store. Each command runs in a fresh interpreter: what a command
imports is only seen there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.service.prices import import_prices
from costsched.store import PriceStore

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
HEAVY = ("pandas", "numpy", "pyarrow", "sqlalchemy", "alembic", "scipy", "cvxpy",
         "matplotlib")
# What no command of a store at the newest revision loads unless it solves a collection
# or draws a chart.
NEVER = ("alembic", "scipy", "cvxpy", "matplotlib")
# The daemon's scheduler (`status` reads what the daemon recorded without it) and the
# backtests' replays (a live decision reads the market's past on their grid only when the
# store observed it).
SCHEDULER = ("apscheduler", "costsched.daemon.scheduler", "costsched.backtest")
# The clouds' SDKs and costsched's modules for them: only a command that reaches a cloud
# loads them.
CLOUD = ("boto3", "botocore", "azure", "google", "launchers.aws", "launchers.gcp",
         "launchers.azure", "launchers.clouds", "launchers.carry", "launchers.checkpoints.s3",
         "launchers.checkpoints.gcs", "launchers.checkpoints.azure")
REFUSED = {"tpu.yaml": "name: tpu-task\nresources:\n  accelerators: tpu-v4-8\nrun: train\n",
           "typo.yaml": "name: typo\nresources:\n  accelerators: V10O:1\nrun: train\n"}


def run(commands: list[list[str]], env: dict[str, str], watched: tuple[str, ...] = HEAVY
        ) -> tuple[list[int], str, list[str]]:
    """The commands' exit codes, their stderr, and the `watched` libraries they loaded, run
    one after the other in one fresh interpreter (what none of them loads, each does not;
    a package counts once one of its modules ran: cvxpy's lazy stand-in alone does not; a
    dotted name, one module, once it ran)."""
    probe = ("import json, sys\nfrom costsched.cli import app\ncodes = []\n"
             f"for argv in {commands!r}:\n"
             "    try:\n        app(argv)\n    except SystemExit as exc:\n"
             "        codes.append(exc.code or 0)\n"
             f"loaded = sorted(h for h in {watched!r} if any(m.startswith(h + '.') "
             "or ('.' in h and m == h) for m in sys.modules))\n"
             "print('PROBE=' + json.dumps([codes, loaded]), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, check=True, cwd=env["HOME"])
    text, _, probe_out = out.stderr.rpartition("PROBE=")
    codes, loaded = json.loads(probe_out)
    return codes, text, loaded


def finished_job(db: str) -> None:
    """A job that ran an hour on one of the demo's offerings and ended (as the demo's)."""
    start = datetime.now(timezone.utc) - timedelta(hours=2)
    spec = {"name": "hello", "run": "true", "throughputs": {"V100": 1.0}, "steps": 3600,
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}
    store = PriceStore(db)
    job = store.jobs.create("hello", {"spec": spec, "source": "hello.yaml"}, 3600, at=start)
    store.jobs.place(job, ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux"),
                     gpu_model="V100", gpu_count=1, at=start, usd_per_hour=0.92,
                     reason="launch", instance=f"{job}-1")
    store.jobs.record_step(job, 3600, at=start + timedelta(hours=1))
    store.jobs.end_placement(job, start + timedelta(hours=1))
    store.jobs.transition(job, "succeeded", at=start + timedelta(hours=1))
    store.dispose()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    db = str(home / "store.sqlite")
    import_prices(db, [EXAMPLES / "demo" / "prices-before.csv"], partial=False)
    finished_job(db)
    for name, text in REFUSED.items():
        (home / name).write_text(text)
    return {**os.environ, "HOME": str(home), "COSTSCHED_DB": db, "COLUMNS": "200",
            "COSTSCHED_INSTANCES": str(home / "instances"),
            "COSTSCHED_DISCOVERED_TYPES": str(home / "none.csv"),
            "COSTSCHED_DAEMON_AUTOSTART": "false", "XDG_CONFIG_HOME": str(home / "config")}


def test_tasks_refused_at_parsing_load_nothing_heavy(env: dict[str, str]) -> None:
    codes, err, loaded = run([["plan", "tpu.yaml"], ["plan", "typo.yaml"],
                              ["launch", "typo.yaml"]], env)
    assert codes == [2, 2, 2] and err.count("field resources.accelerators") == 3
    assert loaded == []


def test_tasks_refused_at_parsing_load_no_plan_tables(env: dict[str, str]) -> None:
    """Nor the tables a plan prints, nor the policies its notes name."""
    shown = ("costsched.cli.plan_tables", "costsched.cli.plan_figures",
             "costsched.cli.plan_json", "costsched.policies")
    codes, _, loaded = run([["plan", "tpu.yaml"], ["plan", "typo.yaml"],
                            ["launch", "typo.yaml"]], env, watched=shown)
    assert codes == [2, 2, 2] and loaded == [], loaded
    codes, _, loaded = run([["plan", str(EXAMPLES / "resnet50-anywhere.yaml")]], env,
                           watched=shown)
    assert codes == [0] and loaded == sorted(shown), loaded  # the probe sees them load


def test_gpus_of_a_store_loads_nothing_heavy(env: dict[str, str]) -> None:
    codes, _, loaded = run([["gpus"], ["gpus", "V100", "--json"]], env)
    assert codes == [0, 0] and loaded == []


def test_gpus_loads_no_decision_model(env: dict[str, str]) -> None:
    """The configuration's restart model is all it reads of the optimizer."""
    codes, _, loaded = run([["gpus"], ["gpus", "V100"]], env,
                           watched=("costsched.optimize.overheads", "costsched.optimize.decision",
                                    "costsched.optimize.hazard"))
    assert codes == [0, 0] and loaded == ["costsched.optimize.overheads"], loaded


def test_status_report_and_plan_load_no_solver_chart_or_migration(env: dict[str, str]) -> None:
    codes, _, loaded = run([["status"], ["report"],
                            ["plan", str(EXAMPLES / "resnet50-anywhere.yaml")]], env,
                           watched=HEAVY + SCHEDULER)
    assert codes == [0, 0, 0]
    assert "pandas" in loaded and "sqlalchemy" in loaded  # the probe sees what loads
    assert not set(loaded) & {*NEVER, *SCHEDULER}, loaded
    assert "pyarrow" not in loaded  # pandas's strings are Python's: no Arrow to load


def test_commands_on_a_store_not_made_yet_load_no_migration(env: dict[str, str],
                                                            tmp_path: Path) -> None:
    """With no store yet, `plan` answers from the bundled prices in a store in memory, and
    `prices import` makes the store's file: both made at the newest revision at once."""
    new = {**env, "COSTSCHED_DB": str(tmp_path / "new.sqlite")}
    codes, _, loaded = run([["plan", str(EXAMPLES / "resnet50-anywhere.yaml")],
                            ["prices", "import", str(EXAMPLES / "demo" / "prices-before.csv")]],
                           new, watched=HEAVY)
    assert codes == [0, 0] and (tmp_path / "new.sqlite").exists()
    assert "sqlalchemy" in loaded and "alembic" not in loaded, loaded  # the probe sees


LAUNCH_MACHINERY = ("costsched.service.jobs.runs", "costsched.migration.launcher",
                    "costsched.store.moves")
LAUNCH_STEPS = ("costsched.service.jobs.launches", "costsched.service.jobs.steps",
                "costsched.service.jobs.watch")


@pytest.fixture(scope="module")
def plan_anywhere(env: dict[str, str]) -> tuple[list[int], list[str]]:
    """The plan of a job its deadline policy places, in a fresh interpreter: its exit codes
    and which of the launch's modules it loaded (the two tests below look at that one run:
    watching more names changes nothing of what loads)."""
    codes, _, loaded = run([["plan", str(EXAMPLES / "resnet50-anywhere.yaml")]], env,
                           watched=(*LAUNCH_MACHINERY, "costsched.service.jobs.first_place",
                                    *LAUNCH_STEPS))
    return codes, loaded


def _of(loaded: list[str], watched: tuple[str, ...]) -> list[str]:
    return [name for name in loaded if name in watched]


def test_plan_loads_no_launch_machinery(env: dict[str, str], plan_anywhere) -> None:  # noqa: ANN001
    """A plan starts nothing: it loads neither the job runs' module, the migration
    machine's launcher nor the moves' store (a launch does), unless the job is one its
    deadline policy places: then the plan asks the launch's own decision where it goes."""
    codes, _, loaded = run([["plan", str(EXAMPLES / "resnet50.yaml")]], env,
                           watched=("costsched.prices", *LAUNCH_MACHINERY))
    assert codes == [0] and loaded == ["costsched.prices"], loaded  # the probe sees the planner
    codes, loaded = plan_anywhere[0], _of(plan_anywhere[1], LAUNCH_MACHINERY)
    assert codes == [0] and "costsched.service.jobs.runs" in loaded, loaded  # (it sees them)


def test_plan_asks_launch_s_decision_without_loading_its_steps(plan_anywhere) -> None:  # noqa: ANN001
    """The plan of a job its deadline policy places asks launch's first decision
    (`first_place`), and loads none of the steps a launch then takes."""
    codes, loaded = plan_anywhere[0], _of(plan_anywhere[1],
                                          ("costsched.service.jobs.first_place", *LAUNCH_STEPS))
    assert codes == [0] and loaded == ["costsched.service.jobs.first_place"], loaded


def test_status_loads_no_task_reader_or_booking_planner(env: dict[str, str]) -> None:
    """`status` reads no task file and plans no booking: neither YAML nor the planner."""
    codes, _, loaded = run([["status"], ["status", "hello"]], env,
                           watched=("sqlalchemy", "yaml", "costsched.taskfile",
                                    "costsched.optimize.booked"))
    assert codes == [0, 0] and loaded == ["sqlalchemy"], loaded  # the probe sees the store


def test_daemon_status_and_a_local_launch_load_no_cloud(env: dict[str, str],
                                                        tmp_path: Path) -> None:
    """Real processes (a launch's imports are only seen in a fresh interpreter): about 2 s
    of CPU, the launch's own."""
    codes, _, loaded = run([["daemon", "status"]], env, watched=HEAVY + CLOUD)
    assert codes == [0] and not set(loaded) & {"pandas", "numpy", *NEVER, *CLOUD}, loaded
    home = Path(env["HOME"])
    db = tmp_path / "store.sqlite"  # the launch adds a job: to a copy of the store
    db.write_bytes(Path(env["COSTSCHED_DB"]).read_bytes())
    # a job that runs on past the launch's return: one that ends at once may end within
    # the launch's wait on a loaded machine, whose log is then read through the agent's
    (home / "quick.yaml").write_text("name: quick\nrun: 'sleep 600'\nthroughputs: {V100: 1.0}\n"
                                     "steps: 10\nconstraints: {regions: [us-east-1]}\n")
    own = {**env, "COSTSCHED_DB": str(db), "COSTSCHED_INSTANCES": str(tmp_path / "instances")}
    codes, err, loaded = run([["launch", "quick.yaml"]], own,
                             watched=CLOUD + ("launchers.local", "launchers.agent",
                                              "costsched.daemon.supervisor",
                                              "costsched.daemon.scheduler", "pyarrow"))
    from launchers.local import LocalLauncher

    for instance in LocalLauncher(tmp_path / "instances").instances():
        LocalLauncher(tmp_path / "instances").terminate(instance.id)
    assert codes == [0], err
    # the probe sees the launcher the launch used; with the supervisor's autostart off (as
    # `env` has it), neither the agent's module (its job's state is read without it) nor
    # the supervisor is loaded; pandas's strings are Python's (no Arrow)
    assert loaded == ["launchers.local"], loaded
