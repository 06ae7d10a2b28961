"""A job stopped at its own budget before its speed is judged (`measured.MEASURING`), that
ran far slower than its plan says: the hint prices its rest at the pace it ran so far (its
step readings, however short their span), the slower of that and its plan's, says so,
and the amount it names lets the job finish: the watch's cap does not stop it again.
In-memory launcher, SQLite store."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

PACE = 18.0  # its real speed; its plan says 1,000 steps/s
FIRST = timedelta(seconds=3)  # its first reading, 31 steps in
RAN = timedelta(seconds=9)  # 139 steps: 108 in the 6 s between its readings, under 10 s
WATCH = 30.0
HINT = re.compile(r"give it enough: `costsched start slow --budget ([0-9.]+)` \(\$([0-9.]+) "
                  r"spent \+ \$([0-9.]+) expected for its 1,661 steps left at the "
                  r"([0-9.]+) steps/s it ran so far, not yet measured \+ ")


def _stopped(store: PriceStore, tmp_path: Path, plan: float,
             monkeypatch: pytest.MonkeyPatch) -> tuple[FakeLauncher, int, datetime]:
    # It starts at once: no boot, no warm-up to price (its start would dwarf its rest).
    config = tmp_path / "instant-start.toml"
    config.write_text("[migration]\nrestart_minutes = 0\nwarmup_minutes = 0\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump({
        "name": "slow", "throughputs": {"V100": plan}, "steps": 1800, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"], "budget": 1.0,
                        "at_cap": "stop"},
        "checkpoint": {"interval_minutes": 30, "size_gb": 0.001}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, [path], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    began = store.jobs.placement_rows([job.id])[0].start_at
    store.jobs.record_step(job.id, 31, at=began + FIRST)
    store.jobs.record_step(job.id, 139, at=began + RAN)
    service.stop(store, launcher, job.id, at=began + RAN)
    return launcher, job.id, began + RAN + timedelta(seconds=1)


def _hint(store: PriceStore, launcher: FakeLauncher, job: int, at: datetime) -> str:
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, job, budget=0.001, at=at)
    return str(refused.value)


def test_the_hint_prices_the_rest_at_the_slower_pace_it_ran_so_far(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, job, at = _stopped(store, tmp_path, 1000.0, monkeypatch)
    said = _hint(store, launcher, job, at)
    found = HINT.search(said)
    assert found, said
    assert "*" not in said, said
    amount, spent, rest, pace = (float(found[i]) for i in range(1, 5))
    # Its refusal prices its rest as its hint does: one cost, not its plan's beside it.
    expected = re.search(r"its 1,661 steps left and its start are expected to cost "
                         r"\$([0-9.]+) ", said)
    assert expected is not None and float(expected[1]) >= rest, said
    assert pace == pytest.approx(PACE, rel=0.02)
    assert rest == pytest.approx(1661 / PACE / 3600 * 1.0, rel=0.05)
    assert amount >= spent + rest

    # Started with the amount named, running at the pace it ran: never stopped at its cap
    # again before its last step.
    started = service.start(store, launcher, job, budget=amount, at=at)
    assert started.state == "running"
    began = max(p.start_at for p in store.jobs.placement_rows([job]))
    for k in range(1, 8):
        when = began + timedelta(seconds=WATCH * k)
        step = min(1800.0, 139 + PACE * WATCH * k)
        store.jobs.record_step(job, step, at=when)
        events = caps.enforce(store, launcher, BudgetsConfig(), when, WATCH)
        assert not [e for e in events if e.kind == "budget" and "stopped" in e], \
            (step, events)
        if step >= 1800:
            break
    assert store.jobs.get(job).state != "stopped"


def test_a_pace_faster_than_its_plan_leaves_the_plan_s_figure(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its readings say 18 steps/s where its plan says 10: its rest is not priced at the
    faster pace it ran so far."""
    launcher, job, at = _stopped(store, tmp_path, 10.0, monkeypatch)
    said = _hint(store, launcher, job, at)
    assert "ran so far" not in said, said
    assert re.search(r"expected for its 1,661 steps left", said), said
