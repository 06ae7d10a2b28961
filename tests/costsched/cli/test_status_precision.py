"""`status` writes one amount alike in its two tables, a placement charged for no time
as that (not '0.00 h'), and a gang's node notices only while the gang is not whole."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

from typer.testing import CliRunner

from costsched.cli import app
from costsched.model import NODE_RECOVERY
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, WEST, at, observe


def _status(db: str) -> str:
    result = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.stdout


def _moved_job(tmp_path: Path, extra_seconds: int = 0, **spec: object) -> tuple[str, int]:
    """A job with its own $1 budget that ran 36 s on EAST_A ($0.000243) and 36 s on WEST
    ($0.000412), then, when `extra_seconds` is given, that long on EAST_A again."""
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0243)])
    observe(store, WEST, [(0, 0.0412)])
    spec = {"name": "tiny", "run": "true", "steps": 10, "constraints": {"budget": 1},
            "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}, **spec}
    job = store.jobs.create("tiny", {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(1),
                     usd_per_hour=0.0243, reason="launch", instance="l-1")
    t = at(1) + timedelta(seconds=36)
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=t, usd_per_hour=0.0412,
                     reason="recovery", instance="l-2")
    t += timedelta(seconds=36)
    if extra_seconds >= 0:
        store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=t,
                         usd_per_hour=0.0243, reason="recovery", instance="l-3")
        t += timedelta(seconds=extra_seconds)
    store.jobs.end_placement(job, t)
    store.jobs.transition(job, "stopped", at=t)
    store.dispose()
    return db, job


def test_the_budgets_spend_reads_as_the_jobs_cost_beside_it(tmp_path: Path) -> None:
    # The trial: the Jobs table's '$0.003716' beside the Budgets table's '$0.0037'. At
    # four decimals the job's cost is its parts as written, $0.0002 + $0.0004 = $0.0006
    # (the exact $0.000655 is the JSON's), and the budget's spend reads so too.
    db, _ = _moved_job(tmp_path, extra_seconds=-1)
    out = _status(db)
    [row] = [line for line in out.splitlines() if "│ tiny" in line]
    [cost] = re.findall(r"\$[\d.]+", row)
    assert cost == "$0.0006", out
    [budget] = [line for line in out.splitlines() if "│ job 1 (tiny)" in line]
    cap, spent, committed, forecast = re.findall(r"\$[\d.]+", budget)
    # Committed, and the cap, at the precision of the spent and forecast they are read with
    # (was $0.00, and a cap of $1.00): one row, one precision.
    assert (cap, spent, committed, forecast) == ("$1.0000", cost, "$0.0000", cost), out


def test_a_placement_charged_for_no_time_says_so(tmp_path: Path) -> None:
    # The trial's 'recovery on ...: 0.00 h, $0.00' for a placement that ended in the
    # second it began: it reads as what it was, its zero at four decimals.
    db, _ = _moved_job(tmp_path, extra_seconds=0)
    out = _status(db)
    assert "0.00 h" not in out, out
    assert ("job 1: placed at its recovery on aws us-east-1a p3.2xlarge spot: under a second, "
            "$0.0000") in out
    assert ("job 1: placed at its launch on aws us-east-1a p3.2xlarge spot: billed 0.0100 h x "
            "$0.0243/h = $0.0002") in out


def test_a_gangs_node_notice_reads_as_a_recovery_once_the_job_ended(tmp_path: Path) -> None:
    db, job = _moved_job(tmp_path, extra_seconds=-1, num_nodes=2)
    store = PriceStore(db)
    store.jobs.note(job, NODE_RECOVERY, "instance l-2: node 1 was preempted: replaced "
                    "where it ran", at=at(1) + timedelta(seconds=50))
    store.dispose()
    out = _status(db)
    # Said once, as a recovery is, at the time it came (and counted with its recoveries).
    assert out.count("was preempted") == 1, out
    assert f"recovered at {at(1) + timedelta(seconds=50):%Y-%m-%d %H:%M} UTC: instance l-2: " \
           "node 1 was preempted: replaced where it ran" in " ".join(out.split()), out
    [row] = [line for line in out.splitlines() if "│ tiny" in line]
    assert row.rstrip(" │").endswith("1"), row  # still counted with its recoveries


def _gang(final: bool, out: tuple[int, ...], since_minutes: float = 0.0) -> SimpleNamespace:
    start = at(1)
    events = (SimpleNamespace(id=1, at=start - timedelta(minutes=5), detail="instance a: "
                              "node 2 was preempted: replaced where it ran"),
              SimpleNamespace(id=2, at=start + timedelta(minutes=since_minutes),
                              detail="instance b: node 1 was preempted: replaced where it "
                                     "ran; the gang resumes once the new node is set up"))
    return SimpleNamespace(record=SimpleNamespace(final=final,
                                                  state="succeeded" if final else "running"),
                           nodes_out=out,
                           node_recoveries=events, recovered=(), stopped_first=frozenset(),
                           looked_after=True,
                           open_placement=None if final else {"start_at": start})


def test_a_node_notice_stands_while_its_gang_is_not_whole() -> None:
    from costsched.cli.status_lines import node_notices

    # A node being replaced: what happened to it, on this placement only (not the
    # node of the instance before).
    # (A node of the instance before reads as the recovery it was.)
    before = (f"recovered at {at(1) - timedelta(minutes=5):%Y-%m-%d %H:%M} UTC: instance a: "
              "node 2 was preempted: replaced where it ran")
    assert node_notices(_gang(False, (1,), since_minutes=2)) == [
        before, "instance b: node 1 was preempted: replaced where it ran; the gang resumes "
        "once the new node is set up"]
    # Whole again, or ended: each as a recovery, at the time it came, what was to come
    # said as come.
    whole = [before, f"recovered at {at(1):%Y-%m-%d %H:%M} UTC: instance b: node 1 was "
             "preempted: replaced where it ran; the gang resumed once the new node was "
             "set up"]
    assert node_notices(_gang(False, ())) == whole
    assert node_notices(_gang(True, ())) == whole
    failed = _gang(True, ())  # ended before it resumed, maybe: no word of what was to come
    failed.record.state = "failed"
    assert node_notices(failed)[1].endswith("replaced where it ran"), node_notices(failed)


def test_a_gangs_resume_is_said_on_its_recoverys_line_and_a_whole_loss_on_its_own() -> None:
    from costsched.cli.status_lines import node_notices

    gang = _gang(False, (1,), since_minutes=2)
    a, b = gang.node_recoveries
    resumed = SimpleNamespace(id=3, at=b.at + timedelta(minutes=3), detail="instance b: "
                              "node 1: resumes from step 1,200 (its checkpoint's): no step lost")
    again = SimpleNamespace(id=4, at=b.at + timedelta(minutes=9), detail="instance b: node 1 "
                            "was preempted: replaced where it ran; the gang resumes once the "
                            "new node is set up")
    gang.node_recoveries, gang.recovered = (a, b, again), (resumed,)
    # The repair it resumed after reads as the recovery it was, with the step it resumed
    # from; the one under way stands as it is.
    assert node_notices(gang)[1:] == [
        f"recovered at {b.at:%Y-%m-%d %H:%M} UTC: instance b: node 1 was preempted: "
        "replaced where it ran; the gang resumed once the new node was set up; resumes from "
        "step 1,200 (its checkpoint's): no step lost", again.detail]
    # The whole gang lost after: its recovery's note is no repair's.
    whole = SimpleNamespace(id=5, at=b.at + timedelta(minutes=20), detail="instance b: "
                            "resumes from step 1,500 (its checkpoint's): 3 steps lost")
    gang.recovered, gang.node_recoveries = (whole,), (a, b)
    gang.nodes_out, gang.record.state = (), "recovering"
    assert not any("1,500" in line for line in node_notices(gang))
