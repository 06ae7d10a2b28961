"""`costsched launch` does its work once: a job is planned once and the throughput table read
once for it, whether or not a budget check prices it before the launch places it (a real
SQLite store, the local launcher, in this process)."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.optimize import planner
from costsched.service import estimates, throughputs
from costsched.service.jobs import budget_launch, launches, runs
from costsched.service.prices import import_prices

ROOT = Path(__file__).resolve().parents[3]

TASK = """\
name: {name}
run: sleep 30
throughputs: {{V100: 1.0}}
steps: 10
constraints: {{regions: [us-east-1], markets: [spot]{budget}}}
"""


def counted(monkeypatch: pytest.MonkeyPatch, name: str, *owners: object) -> list:
    """Calls of the function `name` of each of `owners` (the module that defines it and
    those that imported it by name) from now on, each as the stack it came from; the calls
    still go through."""
    calls: list = []
    real = getattr(owners[0], name)

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - whatever it takes
        calls.append("".join(traceback.format_stack(limit=14)))  # where each comes from
        return real(*args, **kwargs)

    for owner in owners:  # (one that no longer imports it by name is left as it is)
        if hasattr(owner, name):
            monkeypatch.setattr(owner, name, counting)
    return calls


@pytest.mark.parametrize("budget", ["", ", budget: 100"], ids=["no budget", "own budget"])
def test_a_launch_plans_its_job_once_and_reads_its_table_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: str) -> None:
    from costsched.store import PriceStore

    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    db = tmp_path / "s.sqlite"
    store = PriceStore(f"sqlite:///{db}")
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    store.dispose()
    path = tmp_path / "small.yaml"
    path.write_text(TASK.format(name="small", budget=budget))
    plans = counted(monkeypatch, "plan_job", planner, estimates)
    tables = counted(monkeypatch, "table_with_measured", throughputs, launches,
                     budget_launch, runs)
    try:
        done = CliRunner().invoke(app, ["launch", str(path), "--wait", "0", "--db", str(db)])
        assert done.exit_code == 0, done.output
        assert "small" in done.stdout
        if budget:
            assert "its own budget" in done.stdout  # the budget check priced it
    finally:
        CliRunner().invoke(app, ["stop", "small", "--db", str(db)])
    assert len(plans) == 1, "\n=====\n".join(plans)
    # Once for the launch (its budget check, its placement, its start); the table it shows
    # after its wait reads it afresh (the job may have reported its speed since), once,
    # where it has a budget whose spending the table shows.
    assert len(tables) == (2 if budget else 1), "\n=====\n".join(tables)
