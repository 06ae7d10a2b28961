"""A look at a job from another process at every write of its second recovery (its
state, its lost placement's end, the new placement, each step of its move), without a
reconcile, with and without the launcher's word: a placement the table shows is among
the lines listed under it, open, and the lines add up to the cost column. Between the
job's turn to recovering and its lost placement's end, a look that asks the launcher
charges that placement to its loss (`statuses._lost_ends`): listed so, with nothing
'placed, not charged yet' beside it (the cost column read '<$0.0001' over lines of
'$0.0000'). In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from costsched.amounts import charged_usd, charging, total_as_written
from costsched.cli.status_lines import _total, lists_placements, part_lines, view_scale
from costsched.service import jobs as service
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_start_secrets import _spec


def _looked(store: PriceStore, launcher: FakeLauncher | None, job: int) -> list[str]:
    """What is wrong with a look at the job now (nothing: [])."""
    [s] = service.status(store, launcher, job, reconcile_first=False)
    wrong = []
    open_ids = [p.id for p in s.cost.charged if p.end_at is None]
    if s.open_placement is not None and s.open_placement["id"] not in open_ids \
            and s.instance_state in ("running", "pending", ""):
        wrong.append(f"placement {s.open_placement['id']} shown, not charged as open")
    places = view_scale([s]).usd
    lines = part_lines(s, places, 4)
    if lists_placements(s) and len(lines) != len(s.cost.charged):
        wrong.append(f"{len(lines)} lines for {len(s.cost.charged)} placements")
    parts = total_as_written([charging(p.usd, p.end_at is None) for p in s.cost.charged],
                             places)  # the lines' amounts, as written
    if charged_usd(_total(s, places), places) != charged_usd(parts, places) and \
            lists_placements(s):
        wrong.append(f"cost {_total(s, places)} != lines {parts}")
    return [f"{s.record.state}: {w}" for w in wrong]


def test_every_look_during_a_second_recovery_lists_what_it_charges(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = FakeLauncher()
    [job] = service.launch(store, _spec(tmp_path, "twice", []), launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    launcher.set(str(_open_placement(store, job.id)["instance"]), "preempted")
    service.reconcile(store, launcher)  # the first recovery
    wrong: list[str] = []

    def looked(owner: Any, name: str) -> None:
        write = getattr(owner, name)

        def after(*args: Any, **kwargs: Any) -> Any:
            out = write(*args, **kwargs)
            wrong.extend(f"after {name}: {w}" for look in (None, launcher)
                         for w in _looked(store, look, job.id))
            return out

        monkeypatch.setattr(owner, name, after)

    for name in ("place", "end_placement", "transition", "runs"):
        looked(store.jobs, name)
    looked(store.moves, "advance")
    launcher.set(str(_open_placement(store, job.id)["instance"]), "preempted")
    service.reconcile(store, launcher)  # the second
    assert [m.kind for m in store.moves.of_job(job.id)] == ["launch", "recovery", "recovery"]
    assert wrong == [], "\n".join(wrong)
