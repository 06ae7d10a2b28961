"""The watch prices a running job's rest from its last step reading, less the time since
that reading (at most one watch interval): its spend is billed to now, so its rest is
priced to now too. A job whose spend plus its rest now fits its budget runs to its end,
though its rest as last read would pass it. The hint that gives a stopped job enough
finishes it when run as printed, at its pace and at a pace slower by the room it says,
not slower still. In-memory launcher, SQLite store."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched import own_budget
from costsched.config import BudgetsConfig
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.caps import raise_budget
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

STEPS = 2500
INTERVAL = 30.0
PRICE = 36.0  # $/h: $0.01 a second


def _launched(store: PriceStore, tmp_path: Path, step: int, read_after: float,
              budget: float) -> tuple[FakeLauncher, int, datetime]:
    """A job of 2,500 steps at its plan's 10 steps/s on $36/h, whose `step` was read
    `read_after` s into its placement; returns the time of the watch, one interval later."""
    set_prices(store, {"us-east-1a": PRICE}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "read-late", "throughputs": {"V100": 10}, "steps": STEPS, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [placed] = store.jobs.placement_rows([job.id])
    raise_budget(store, job.id, budget, at=placed.start_at)
    read = placed.start_at.replace(microsecond=0) + timedelta(seconds=read_after)
    store.jobs.record_step(job.id, step, at=read)
    return launcher, job.id, read + timedelta(seconds=INTERVAL)


def test_the_rest_is_priced_to_now_not_to_the_last_reading(store: PriceStore,
                                                           tmp_path: Path) -> None:
    # Read at 2,100 (400 steps, 40 s left) 210 s in; watched 240 s in: about $2.40 spent,
    # its rest now 10 s ($0.11 charged: 11 s), not 40 s (a whole interval, $0.30).
    launcher, job_id, at = _launched(store, tmp_path, 2100, 210, 2.60)
    [state] = caps.budget_states(store, BudgetsConfig(), at, INTERVAL)
    assert state.ahead_seconds[job_id] == 11.0
    assert abs(state.next_usd[job_id] - PRICE * 11 / 3600) < 1e-9
    events = caps.enforce(store, launcher, BudgetsConfig(), at, INTERVAL)
    assert not [e for e in events if "stopped at " in e], events
    assert store.jobs.get(job_id).state == "running"


def test_a_reading_older_than_an_interval_is_credited_one_interval(
        store: PriceStore, tmp_path: Path) -> None:
    # Read at 1,500 (100 s left) 120 s in, watched 90 s later: credited one interval (30 s),
    # never progress the job has not reported for longer than that.
    launcher, job_id, _ = _launched(store, tmp_path, 1500, 120, 100.0)
    at = store.jobs.get(job_id).updated_at + timedelta(seconds=3 * INTERVAL)
    [state] = caps.budget_states(store, BudgetsConfig(), at, INTERVAL)
    assert state.ahead_seconds[job_id] == INTERVAL  # 70 s left: a whole interval
    assert own_budget.rest_now(100.0, 90.0, INTERVAL) == 70.0
    # one its pace says is at its end but that has not said so: charged its last second
    assert own_budget.rest_now(20.0, 25.0, INTERVAL) == 1.0
    assert own_budget.ahead_seconds(INTERVAL, own_budget.rest_now(20.0, 25.0, INTERVAL)) \
        == 2.0
    assert own_budget.rest_now(float("nan"), 25.0, INTERVAL) != \
        own_budget.rest_now(float("nan"), 25.0, INTERVAL)  # not known stays not known


def test_a_stop_says_the_charge_of_its_rest_now(store: PriceStore, tmp_path: Path) -> None:
    # Read at 2,000 (50 s left) 200 s in; watched 230 s in: $2.30 spent + its rest now,
    # 20 s (charged 21 s, $0.21), passes $2.45: stopped, its line saying that charge.
    launcher, job_id, at = _launched(store, tmp_path, 2000, 200, 2.45)
    [event] = [e for e in caps.enforce(store, launcher, BudgetsConfig(), at, INTERVAL)
               if "stopped at " in e]
    found = re.search(r"\+ \$([\d.]+) for the next watch interval \((\d+) s, to its end at "
                      r"its pace", str(event))
    assert found is not None, event
    assert found.group(2) == "21", event


HINT = re.compile(r"give it enough: `costsched start read-late --budget ([0-9.]+)` .*? "
                  r"expected for its ([0-9,]+) steps left.*?; that amount also holds its rest "
                  r"taking about ([0-9]+) s longer than priced")


def _hinted(store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
            ) -> tuple[FakeLauncher, int, float, float, float, datetime]:
    """A job stopped 100 s in at step 1,000 (its pace, 10 steps/s, its plan's) and the hint
    that gives it enough: its amount, its steps left, the room it says it leaves; a start
    costs nothing here (no boot, no warm-up)."""
    config = tmp_path / "instant.toml"
    config.write_text("[migration]\nrestart_minutes = 0\nwarmup_minutes = 0\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    launcher, job_id, _ = _launched(store, tmp_path, 1000, 100, 1.0)
    began = store.jobs.placement_rows([job_id])[0].start_at.replace(microsecond=0)
    service.stop(store, launcher, job_id, at=began + timedelta(seconds=100))
    again = began + timedelta(seconds=200)
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, job_id, budget=0.01, at=again)
    found = HINT.search(str(refused.value))
    assert found, refused.value
    amount, left, room = (float(found[i].replace(",", "")) for i in (1, 2, 3))
    return launcher, job_id, amount, left, room, again


def _runs_at(store: PriceStore, launcher: FakeLauncher, job_id: int, amount: float,
             left: float, at: datetime, seconds: float) -> str:
    """Start the job with the hint's `amount` at `at` and let it do its `left` steps in
    `seconds`, watched every interval as the daemon does (the budgets checked before the
    pass reads the step: each watch sees the step read at the one before): 'stopped' where
    a watch stopped it while it ran, else 'finished'."""
    service.start(store, launcher, job_id, budget=amount, at=at)
    began = store.jobs.placement_rows([job_id])[-1].start_at
    first = STEPS - left
    watch, read = began + timedelta(seconds=INTERVAL + 0.5), None
    while True:
        since = (watch - began).total_seconds()
        if since >= seconds:  # it ended before this watch (which finds it so)
            return "finished"
        events = caps.enforce(store, launcher, BudgetsConfig(), watch, INTERVAL)
        if [e for e in events if "stopped at " in e]:
            return "stopped"
        read = first + left * since / seconds
        store.jobs.record_step(job_id, int(read), at=watch)
        watch += timedelta(seconds=INTERVAL)


def test_the_hint_s_amount_finishes_the_job_at_its_pace_and_within_its_room(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, job_id, amount, left, room, again = _hinted(store, tmp_path, monkeypatch)
    assert room == INTERVAL - 2  # a rest longer than the interval: the interval, less 2 s
    assert _runs_at(store, launcher, job_id, amount, left, again, left / 10) == "finished"


def test_the_hint_s_room_holds_a_slower_rest(store: PriceStore, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, job_id, amount, left, room, again = _hinted(store, tmp_path, monkeypatch)
    assert _runs_at(store, launcher, job_id, amount, left, again,
                    left / 10 + room - 2) == "finished"


def test_a_rest_slower_than_the_hint_s_room_is_stopped_again(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, job_id, amount, left, room, again = _hinted(store, tmp_path, monkeypatch)
    assert _runs_at(store, launcher, job_id, amount, left, again,
                    left / 10 + room + 15) == "stopped"
