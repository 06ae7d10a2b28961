"""A job whose cap was to move it (`at_cap: move`) but that no offering finishes within
what is left is stopped, and its stop says why it was not moved, in dollars: what is left
and the least a move would cost, where. The same words in the job's events, its
notification and `status` (local launcher, real subprocesses, a real SQLite store)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.config import BudgetsConfig
from tests.costsched.service.test_budget_caps import USD_PER_HOUR, _launch, _project, local
from tests.costsched.service.test_budget_moves import _offer, _watch

__all__ = ["local"]  # the fixture, shared with the cap tests

# Its lost work: assumed, or, where its checkpoint's step is known by the stop, counted from
# it ('lost work: none since its checkpoint at step 671'). Within what is left, or, where
# the run's last interval passed the cap on a loaded machine's slow pass, within a budget
# already passed (no amount left: None).
LEFT = r"(?:the \$([0-9.]+) left|its budget, already over by \$[0-9.]+)"
NOT_MOVED = re.compile(r"; not moved: no offering finishes it within " + LEFT + r" "
                       r"\(the cheapest: aws us-east-1b p3\.2xlarge spot, \$([0-9.]+) to "
                       r"finish there including the move of \$([0-9.]+) \(egress "
                       r"\$([0-9.]+), restart \$([0-9.]+), lost work \$([0-9.]+), overlap "
                       r"\$([0-9.]+)\)\); (restart left out: .+; lost work(?: assumed)?: .+)$")

# Where the stored price of its own zone has come down to zone b's by its stop (a loaded
# machine's slow run), no offering is cheaper by the hour: said so, with what is left.
NONE_CHEAPER = re.compile(r"; not moved: no offering it allows is cheaper by the hour than "
                          r"where it runs, to finish it within " + LEFT + r"()$")


def test_a_stop_at_a_cap_that_was_to_move_says_why_no_move_in_dollars(
        tmp_path: Path, db_path: Path, local, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Zone b is half the price: cheaper by the hour, but its rest (some 30 s of steps
    at $18/h, some 15 cents) does not fit in the cents left."""
    store, launcher = local
    job_id = _launch(store, launcher, tmp_path,
                     _project(tmp_path, "halfway", {"budget": 0.08, "at_cap": "move"}),
                     monkeypatch)
    _offer(store, "us-east-1b", USD_PER_HOUR / 2)
    events: list = []
    _watch(store, launcher, job_id, BudgetsConfig(), events)

    assert store.jobs.get(job_id).state == "stopped"
    said = store.jobs.events(job_id)
    said = said[said["kind"] == "budget"]["detail"]
    [stop] = said[said.str.startswith("stopped at its own budget: ")]
    found = NOT_MOVED.search(stop) or NONE_CHEAPER.search(stop)
    assert found, stop
    left, cheapest = (float(x) if x else None for x in found.groups()[:2])
    assert left is None or 0 <= left < 0.08
    assert cheapest is None or left is None or cheapest > left
    if found.re is NOT_MOVED:  # the move's items add up to its price, as written
        move, *items = found.groups()[2:7]
        places = len(move.partition(".")[2])
        assert all(len(i.partition(".")[2]) == places for i in items), stop
        assert f"{sum(float(i) for i in items):.{places}f}" == move, stop
        assert float(move) <= cheapest
        # ... and where its restart and lost work come from: the local launcher boots none.
        assert found.group(8).startswith("restart left out: the local launcher boots no "
                                         "instance"), stop
    # Its notification (the daemon's log line) says the same.
    assert [e for e in events if e.notify == "budget" and " stopped at " in e] == [
        f"job {job_id}: {stop}"]
    store.dispose()
    shown = CliRunner().invoke(app, ["status", "--db", str(db_path), "--no-reconcile"],
                               env={"COLUMNS": "400"})
    assert shown.exit_code == 0, shown.output
    [line] = [x for x in shown.stdout.splitlines()
              if x.startswith(f"  job {job_id}: {stop}; ")]  # the stop's own words
    assert found.group(0) in line, line
