"""While a job runs, a forecast that passes its budget's cap is said once, where the job's
state is said (`status`'s job lines, `status --json`), from the Budgets table's own
figures; a budget raised by `start --budget` reads both amounts as money; a stop at the
cap reads so in `logs --all`'s instance line, whoever carried it out. In-memory launcher,
SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched import own_budget
from costsched.amounts import given, usd
from costsched.config import BudgetsConfig
from costsched.service import jobs as service
from costsched.service import views
from costsched.service.jobs import caps, over_cap
from costsched.service.jobs.caps import raise_budget
from costsched.service.jobs.job_logs import every_log
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

WATCH = 30.0


def _launched(store: PriceStore, tmp_path: Path, at_cap: str | None = None
              ) -> tuple[int, FakeLauncher]:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    constraints: dict = {"regions": ["us-east-1"], "markets": ["spot"]}
    if at_cap:
        constraints["at_cap"] = at_cap
    spec = {"name": "edge", "throughputs": {"V100": 0.5}, "steps": 2000, "run": "true",
            "constraints": constraints,
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return job.id, launcher


def _states(store: PriceStore, at: datetime) -> list[caps.BudgetState]:
    return caps.budget_states(store, BudgetsConfig(), at, WATCH)


def test_a_forecast_past_the_cap_is_said_with_where_it_stops(
        store: PriceStore, tmp_path: Path) -> None:
    job_id, _ = _launched(store, tmp_path)
    [placed] = store.jobs.placement_rows([job_id])
    raise_budget(store, job_id, 0.5, at=placed.start_at)
    at = placed.start_at + timedelta(seconds=60)
    states = _states(store, at)
    [state] = states
    assert state.forecast_usd > state.usd  # 2,000 steps at 0.5 steps/s, $1/h: $1.11
    record = store.jobs.get(job_id)
    line = over_cap.said(states, record, progress=0.0, at_cap="stop")
    # The Budgets table's figures, at its precision.
    places = over_cap.places(states)
    assert line.startswith(f"forecast {usd(state.forecast_usd, places)} passes its budget "
                           f"of {given(0.5, places)}: ")  # (one line, one precision)
    # Stopped when what it spent and the next interval reach the cap: the share of its
    # rest that the cap's room left pays for.
    room = state.usd - state.spent_usd - state.next_usd[job_id]
    share = room / state.to_end_usd[job_id]
    # The cap is checked at each watch: the stop comes at the first check past that share,
    # so up to a watch interval's charge later (at most where its spend reaches the cap).
    latest = (state.usd - state.spent_usd) / state.to_end_usd[job_id]
    assert f"{share:.0%}" != f"{latest:.0%}"
    assert (f"at between about {share:.0%} and {latest:.0%} of its steps (the cap is checked "
            "at each watch; its rest priced as now)") in line, line
    assert f"`costsched start {record.name} --budget USD`" in line
    # Under the cap: nothing said.
    raise_budget(store, job_id, 5.0, at=at)
    assert over_cap.said(_states(store, at), store.jobs.get(job_id), 0.0, "stop") == ""


def test_a_job_its_cap_moves_says_the_move_is_weighed(
        store: PriceStore, tmp_path: Path) -> None:
    job_id, _ = _launched(store, tmp_path, at_cap="move")
    [placed] = store.jobs.placement_rows([job_id])
    raise_budget(store, job_id, 0.5, at=placed.start_at)
    at = placed.start_at + timedelta(seconds=60)
    line = over_cap.said(_states(store, at), store.jobs.get(job_id), 0.0,
                         caps.at_cap_of(store.jobs.get(job_id).spec, BudgetsConfig()))
    assert "at_cap: move" in line


def test_status_json_says_it_once_per_job(store: PriceStore, tmp_path: Path) -> None:
    job_id, launcher = _launched(store, tmp_path)
    [placed] = store.jobs.placement_rows([job_id])
    raise_budget(store, job_id, 0.5, at=placed.start_at)
    shown = service.status(store, launcher)
    states = _states(store, datetime.now(timezone.utc))
    doc = views.status_document(shown, budgets=states)
    [job] = doc["jobs"]  # type: ignore[index]
    assert job["over_cap"].startswith("forecast $")
    assert views.status_document(shown)[0]["over_cap"] is None  # type: ignore[index]


def test_a_budget_raised_reads_as_money(store: PriceStore, tmp_path: Path) -> None:
    job_id, _ = _launched(store, tmp_path)
    [placed] = store.jobs.placement_rows([job_id])
    raise_budget(store, job_id, 0.1, at=placed.start_at)
    raise_budget(store, job_id, 0.27, at=placed.start_at)
    said = [e.detail for e in store.jobs.event_rows([job_id], kinds=["budget"])]
    assert said[-1] == "raised to $0.27 (was $0.10)"
    assert said[0] == "raised to $0.10 (it had none)"
    assert own_budget.budgets(store, [store.jobs.get(job_id)]) == {job_id: 0.27}
    raise_budget(store, job_id, 1234.5, at=placed.start_at)
    assert own_budget.budgets(store, [store.jobs.get(job_id)]) == {job_id: 1234.5}


@pytest.mark.parametrize("final", [True, False])
def test_logs_all_says_a_stop_at_the_cap(store: PriceStore, tmp_path: Path,
                                         final: bool) -> None:
    """The instance line of a job its cap stopped says so, whether it stays stopped or
    was started again (the check that stopped it: a watch's or `status`'s, one path)."""
    job_id, launcher = _launched(store, tmp_path)
    [placed] = store.jobs.placement_rows([job_id])
    raise_budget(store, job_id, 0.001, at=placed.start_at)
    caps.enforce(store, launcher, BudgetsConfig(), placed.start_at + timedelta(seconds=5),
                 WATCH)
    assert store.jobs.get(job_id).state == "stopped"
    if not final:
        raise_budget(store, job_id, 50.0, at=placed.start_at + timedelta(seconds=6))
        service.start(store, launcher, job_id, at=placed.start_at + timedelta(seconds=7))
    head = every_log(store, launcher, job_id).splitlines()[0]
    assert "at the cap of its own budget" in head, head


def test_at_the_pace_shown_the_watch_stops_the_job_within_the_range_said(
        store: PriceStore, tmp_path: Path) -> None:
    """The range is the stop's own rule (`caps.enforce`: what was spent and the charge
    ahead, `own_budget.ahead_seconds`, passing the cap), read forward at the pace the
    rest is priced at: a job that keeps that pace, its steps read at each watch, is
    stopped by the watch at a share of its steps inside the range `status` said. (A job
    that slows after it is said stops earlier: its rest was priced as then.)"""
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "paced", "throughputs": {"V100": 0.5}, "steps": 400, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 0.0}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [placed] = store.jobs.placement_rows([job.id])
    start = placed.start_at
    raise_budget(store, job.id, 0.2, at=start)
    pace, setup = 0.25, 10.0  # measured: half its plan's 0.5 steps/s, after 10 s of set-up

    def stepped(seconds: float) -> None:
        at = start + timedelta(seconds=seconds)
        store.jobs.record_steps({job.id: pace * (seconds - setup)}, at=at)

    for seconds in (20, 67, 97, 127):  # read as the watch reads it, its pace measured
        stepped(seconds)
    said_at = start + timedelta(seconds=127)
    states = _states(store, said_at)
    record = store.jobs.get(job.id)
    first, last = over_cap.stop_share(states[0], job.id, record.steps_done / 400)
    assert 0.2 < first < last < 0.8
    line = over_cap.said(states, record, record.steps_done / 400, "stop")
    assert f"at between about {first:.0%} and {last:.0%} of its steps" in line, line
    seconds = 127.0
    while store.jobs.get(job.id).state == "running" and seconds < 3600:
        seconds += WATCH
        stepped(seconds)
        caps.enforce(store, launcher, BudgetsConfig(), start + timedelta(seconds=seconds),
                     WATCH)
    assert store.jobs.get(job.id).state == "stopped"
    share = pace * (seconds - setup) / 400
    assert first <= share <= last, (first, share, last)
