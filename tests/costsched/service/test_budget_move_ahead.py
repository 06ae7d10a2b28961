"""`at_cap: move` weighs its move when the forecast first passes the cap, not only at the
cap (where what is left is about one watch interval's charge, which no move with its
warm-up fits): the budget's decider (`BudgetDecider`, the path a move at the cap takes)
moves the job where its rest, the move included, fits what is left and staying does not.
In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from costsched.config import BudgetsConfig
from costsched.optimize.decision import Overheads
from costsched.service.jobs import caps
from costsched.service.jobs.caps import raise_budget
from costsched.store import PriceStore
from tests.costsched.service.test_budget_over_cap import WATCH, _launched, _states
from tests.costsched.service.test_jobs import set_prices

OVERHEADS = Overheads(restart_minutes=1, warmup_minutes=1, overlap_minutes=0.1,
                      lost_work_minutes=0)


def _cheaper_after_launch(store: PriceStore, tmp_path: Path, at_cap: str
                          ) -> tuple[int, object, datetime]:
    job_id, launcher = _launched(store, tmp_path, at_cap=at_cap)
    [placed] = store.jobs.placement_rows([job_id])
    set_prices(store, {"us-east-1b": 0.1}, datetime.now(timezone.utc))
    # Its rest here: 2,000 steps at 0.5 steps/s at $1/h, $1.11; at $0.10/h, about $0.11.
    raise_budget(store, job_id, 0.5, at=placed.start_at)
    return job_id, launcher, placed.start_at + timedelta(seconds=60)


def test_a_forecast_past_the_cap_moves_a_job_its_cap_moves(
        store: PriceStore, tmp_path: Path) -> None:
    job_id, launcher, at = _cheaper_after_launch(store, tmp_path, "move")
    [state] = _states(store, at)
    assert state.forecast_usd > state.usd  # staying does not fit
    assert state.spent_usd + state.committed_usd < state.usd  # not at its cap
    events = caps.enforce(store, launcher, BudgetsConfig(), at, WATCH, OVERHEADS)
    moved = [e for e in events if "moved at its own budget" in e]
    assert moved, events
    assert "forecast $" in moved[0] and "passes the budget of $0.50" in moved[0]
    assert "us-east-1b" in moved[0]
    assert [m.kind for m in store.moves.of_job(job_id)][-1] == "migration"
    assert store.jobs.get(job_id).state != "stopped"


def test_a_job_its_cap_stops_is_not_moved_ahead(store: PriceStore, tmp_path: Path) -> None:
    job_id, launcher, at = _cheaper_after_launch(store, tmp_path, "stop")
    events = caps.enforce(store, launcher, BudgetsConfig(), at, WATCH, OVERHEADS)
    assert not [e for e in events if "moved at" in e]
    assert [m.kind for m in store.moves.of_job(job_id)] == ["launch"]
    assert store.jobs.get(job_id).state == "running"


def test_a_move_at_the_cap_is_said_by_status_and_by_its_move_s_line(
        store: PriceStore, tmp_path: Path) -> None:
    """The move's own words (why its budget moved it) under the job in `status`, its
    placement said as placed by that move, and the line its move's end makes (the
    supervisor's log) saying so too."""
    from costsched.cli.status_lines import cap_move_lines, part_lines
    from costsched.service import jobs as service
    from costsched.service.jobs.watch import advance_moves

    job_id, launcher, at = _cheaper_after_launch(store, tmp_path, "move")
    [moved] = [e for e in caps.enforce(store, launcher, BudgetsConfig(), at, WATCH, OVERHEADS)
               if "moved at its own budget" in e]
    words = str(moved).split(": ", 1)[1]  # 'moved at its own budget: its forecast ...'
    [s] = service.status(store, launcher, job_id, reconcile_first=False)
    assert cap_move_lines(s) == [words]
    placed = [line for line in part_lines(s, 5, 4) if "us-east-1b" in line]
    assert placed and placed[-1].startswith(
        "placed by its move at its own budget's cap on "), placed
    # Such a move carried on by another process (the supervisor, after a `status` began
    # it): the line its end makes says why it was made.
    made = store.moves.of_job(job_id)[-1]
    [here] = store.jobs.placement_rows([job_id])[-1:]
    store.moves.create(job_id, "migration", made.candidates, at=here.start_at,
                       source_instance=str(here.instance), detail=made.detail)
    said: list[str] = []
    for _ in range(20):
        said += [str(e) for e in advance_moves(store, launcher)]
        if not store.moves.unfinished():
            break
    [done] = [line for line in said if "-> done" in line]
    assert done.endswith(f"-> done: {words}"), done
