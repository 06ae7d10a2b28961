"""What `status` says under its table (costsched.cli.status_lines): a failed job's reason
in one line in the list of every job and whole, its last line said once, in `status JOB`;
a job its budget's cap stopped, with the budget, its cap and the command or key that
starts it again (run here); a job's parts that add up to its cost as written; a zero cost
that reads alike in every table."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.cli import jobs as cli_jobs
from costsched.migration.launcher import Instance
from costsched.model import InvalidInput
from costsched.store import PriceStore
from launchers import make_launcher
from tests.cleanup import stop_unless_ended
from tests.costsched.test_costs import EAST_A, WEST, observe

NOW = datetime.now(timezone.utc)
REASON = "exit code 3 (ValueError: bad batch size)"
OUTPUT = "preparing\nloading data\nValueError: bad batch size\n"


class FailedLauncher:
    """The local launcher's word on one failed instance, job 1's "1-1" (and none other)."""

    name = "local"

    def status(self, instance: str) -> Instance:
        if instance != "1-1":
            raise InvalidInput(f"instance {instance}: unknown")
        return Instance("1-1", 1, "a", EAST_A, "failed", exit_code=3, detail=REASON)

    def logs(self, instance: str, tail: int = 200) -> str:
        return OUTPUT


def _job(store: PriceStore, name: str, tmp_path: Path, hours: float, usd_per_hour: float,
         **constraints: object) -> int:
    """A job placed on EAST_A `hours` ago at `usd_per_hour`, still running."""
    spec = {"name": name, "run": "true", "steps": 10, "throughputs": {"V100": 100},
            "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0},
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"], **constraints}}
    start = NOW - timedelta(hours=hours)
    job = store.jobs.create(name, {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            checkpoint_location=str(tmp_path / "ckpt" / name), at=start)
    store.jobs.transition(job, "running", at=start)
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=start,
                     usd_per_hour=usd_per_hour, reason="launch", instance=f"{job}-1")
    return job


def _priced(tmp_path: Path, usd_per_hour: float = 0.36) -> tuple[PriceStore, str]:
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(-24 * 365, usd_per_hour)])  # from long before NOW
    return store, db


def _under(output: str, job: int) -> list[str]:
    return [line.split(": ", 1)[1] for line in output.splitlines()
            if line.startswith(f"  job {job}: ")]


def _status(db: str, *args: str, env: dict[str, str] | None = None) -> str:
    result = CliRunner().invoke(app, ["status", *args, "--db", db, "--no-reconcile"],
                                env={"COLUMNS": "250", **(env or {})})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_list_says_why_a_job_failed_in_one_line_and_status_job_says_it_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, db = _priced(tmp_path)
    job = _job(store, "breaks", tmp_path, 0.1, 0.36)
    store.jobs.end_placement(job, NOW)
    store.jobs.transition(job, "failed", at=NOW, detail=REASON)
    store.dispose()
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda *_: FailedLauncher())

    listed = _under(_status(db), job)
    # One line: the words `status JOB` gives, its last line in them, and where the rest is.
    assert listed[0] == ("failed with exit code 3 (ValueError: bad batch size) "
                         f"(`costsched status {job}` shows its last lines)")
    assert not any(line.startswith(("its last", "  |")) for line in listed)

    alone = _status(db, "breaks")
    # The reason quoted the last line; it is said once, in the output's last lines.
    assert alone.count("ValueError: bad batch size") == 1, alone
    assert _under(alone, job)[:5] == ["failed with exit code 3", "its last 3 lines:",
                                      "  | preparing", "  | loading data",
                                      "  | ValueError: bad batch size"]


def _stopped_at_cap(store: PriceStore, tmp_path: Path, name: str, called: str | None,
                    **constraints: object) -> int:
    """A job that ran an hour at $0.36/h, stopped at the cap of budget `called` (None: its
    own)."""
    job = _job(store, name, tmp_path, 1.0, 0.36, **constraints)
    called = called or f"job {job} ({name})"
    why = f"stopped at budget {called}: $0.36 spent + $0.01 for the next watch interval " \
          f"would pass the budget of $0.30"
    store.jobs.note(job, "budget", why, at=NOW)
    store.jobs.transition(job, "stopped", at=NOW, detail=why)
    store.jobs.end_placement(job, NOW)
    return job


def test_a_job_stopped_at_its_own_budget_says_so_and_how_to_start_it(tmp_path: Path) -> None:
    store, db = _priced(tmp_path)
    job = _stopped_at_cap(store, tmp_path, "capped", None, budget=0.3)
    store.dispose()
    [line] = [x for x in _under(_status(db), job) if x.startswith("stopped")]
    # The amount `start` itself names as enough, in one command.
    # The stop's own reason, in its own figures (as it was recorded), then the command.
    assert line.startswith("stopped at its own budget: $0.36 spent + $0.01 for the next watch "
                           "interval would pass the budget of $0.30; to start it again, give "
                           "it enough: `costsched start capped --budget "), line
    # The command as said works: its budget is raised and the job starts again.
    [command] = re.findall(r"`costsched (start [^`]+)`", line)
    result = CliRunner().invoke(app, [*command.split(), "--wait", "0", "--db", db],
                                env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    store = PriceStore(db)
    said = [e.detail for e in store.jobs.event_rows([job], kinds=["budget"])]
    assert any(e.startswith(f"raised to ${command.split()[-1]} ") for e in said), said
    assert store.jobs.get(job).state in ("launching", "running", "succeeded")  # `true` ran
    stop_unless_ended(store, make_launcher("local"), job)
    store.dispose()


def test_a_raised_budget_s_cap_and_what_is_left_read_as_they_add_up(tmp_path: Path) -> None:
    """A job stopped at its own $0.0003 having spent $0.0004, its budget raised to $5 by
    `start --budget` (the start then refused): the cap is the raised one, and what is left
    reads at the spend's precision, not as the whole cap."""
    store, db = _priced(tmp_path, 0.0004)
    job = _job(store, "capped", tmp_path, 1.0, 0.0004, budget=0.0003)
    why = (f"stopped at budget job {job} (capped): $0.0004 spent + <$0.0001 for the next "
           "watch interval would pass the budget of $0.0003")
    store.jobs.note(job, "budget", why, at=NOW)
    store.jobs.transition(job, "stopped", at=NOW, detail=why)
    store.jobs.end_placement(job, NOW)
    from costsched.service.jobs.caps import raise_budget

    raise_budget(store, job, 5, at=NOW)
    store.dispose()
    [line] = [x for x in _under(_status(db), job) if x.startswith("stopped")]
    assert line == ("stopped at its own budget: $0.0004 spent + <$0.0001 for the next watch "
                    "interval would pass the budget of $0.0003; $4.9996 left now of its "
                    "budget of $5.0000: `costsched start capped` starts it again")


def test_a_job_stopped_at_a_named_budget_names_its_key_and_starts_once_it_is_raised(
        tmp_path: Path) -> None:
    store, db = _priced(tmp_path)
    job = _stopped_at_cap(store, tmp_path, "capped", "team", budget_name="team")
    store.dispose()
    config = tmp_path / "config.toml"
    config.write_text('[budgets.named.team]\nusd = 0.30\nperiod = "total"\n')
    env = {"COSTSCHED_CONFIG": str(config)}
    [line] = [x for x in _under(_status(db, env=env), job) if x.startswith("stopped")]
    assert line == ("stopped at budget team: $0.36 spent + $0.01 for the next watch interval "
                    "would pass the budget of $0.30; to start it again, raise "
                    "budgets.named.team.usd in the configuration (its file: `costsched config "
                    "show`)")
    # The command named shows the budget's settings and their file.
    shown = CliRunner().invoke(app, ["config", "show"], env={"COLUMNS": "250", **env})
    assert shown.exit_code == 0, shown.output
    assert "team: {usd = 0.3," in shown.stdout
    assert f"Configuration from {config}" in shown.stdout
    config.write_text('[budgets.named.team]\nusd = 5\nperiod = "total"\n')  # raised
    [line] = [x for x in _under(_status(db, env=env), job) if x.startswith("stopped")]
    assert line.startswith("stopped at budget team: $0.36 spent + $0.01 for the next watch "
                           "interval would pass the budget of $0.30; $4.64 left now of budget "
                           "team's $5.00 in total: `costsched start capped` starts it again")


def test_a_jobs_parts_add_up_to_its_cost_as_written(tmp_path: Path) -> None:
    store, db = _priced(tmp_path, 0.3576)
    observe(store, WEST, [(-24 * 365, 0.3336)])
    job = _job(store, "moved", tmp_path, 2 / 60, 0.3576)
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=NOW - timedelta(minutes=1),
                     usd_per_hour=0.3336, reason="recovery", instance="l-2")
    store.jobs.end_placement(job, NOW)
    store.jobs.transition(job, "succeeded", at=NOW)
    store.dispose()
    out = _status(db)
    # $0.00596 + $0.00556: at the store's four decimals (its smallest charge's) the parts
    # read $0.0060 and $0.0056 and the cost is their sum as written, $0.0116 (the exact
    # sum's $0.0115 is the JSON's $0.01152).
    [row] = [line for line in out.splitlines() if "moved" in line and "│" in line]
    assert "$0.0116" in row
    parts = [line for line in _under(out, job) if " on aws " in line]
    figures = [float(line.rsplit("$", 1)[1]) for line in parts]
    assert figures == [0.006, 0.0056] and round(sum(figures), 4) == 0.0116, parts


def test_a_zero_cost_reads_as_it_does_alone(tmp_path: Path) -> None:
    store, db = _priced(tmp_path)
    older = _job(store, "older", tmp_path, 0.005, 0.36)  # $0.0018
    store.jobs.end_placement(older, NOW)
    store.jobs.transition(older, "succeeded", at=NOW)
    instant = _job(store, "instant", tmp_path, 0.0, 0.36)  # placed and ended at once: $0
    store.jobs.end_placement(instant, NOW - timedelta(hours=0))
    store.jobs.transition(instant, "failed", at=NOW, detail="exit code 1")
    store.dispose()
    out = _status(db)
    # Zero at the store's scale, one precision down the column: $0.0000 beside $0.0018,
    # and alike when it is shown alone (the scale is the store's, not the view's).
    [row] = [line for line in out.splitlines() if "instant" in line and "│" in line]
    assert "$0.0000 " in row and "$0.00 " not in row, row
    alone = _status(db, "instant")
    [row] = [line for line in alone.splitlines() if "instant" in line and "│" in line]
    assert "$0.0000 " in row, row


def test_a_gangs_placement_line_names_its_nodes(tmp_path: Path) -> None:
    """Its cost is every node's: the line says how many, so hours x price x nodes reads."""
    store, db = _priced(tmp_path)
    job = _job(store, "pair", tmp_path, 0.5, 0.36)
    with store.engine.begin() as conn:
        from costsched.store import schema

        record = store.jobs.get(job).spec
        record["spec"]["num_nodes"] = 2
        conn.execute(schema.jobs.update().where(schema.jobs.c.id == job).values(
            spec=json.dumps(record)))
    store.jobs.end_placement(job, NOW)
    store.jobs.transition(job, "succeeded", at=NOW)
    store.dispose()
    [line] = [x for x in _under(_status(db), job) if x.startswith("placed at its launch on ")]
    assert line == ("placed at its launch on aws us-east-1a p3.2xlarge spot: billed 0.5000 h x "
                    "$0.7200/h for 2 nodes = $0.3600"), line


def test_a_cap_reads_as_set_beside_a_small_spend() -> None:
    from types import SimpleNamespace

    from costsched.cli.status_lines import cap_lines
    from costsched.service.jobs.caps import BudgetState

    job = SimpleNamespace(record=SimpleNamespace(state="stopped", name="fit", id=4),
                          stopped_why="stopped at budget team: over")
    team = BudgetState("team", "named", 0.005, "total", 0.0043, 0.0, 0.0, jobs=(4,))
    [line] = cap_lines(job, [team])  # type: ignore[arg-type]
    assert line.startswith("stopped at budget team: over; $0.0007 left now of budget team's "
                           "$0.0050 in total: "), line  # (one line, one precision)
