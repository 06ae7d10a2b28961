"""A job with a deadline says when it is due wherever its status is shown: the text (with
the hours left, or since it passed), `status --json` and the dashboard (`deadline_at`, and
its pages in the words of `status`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from costsched.service import jobs as service
from costsched.service.views import due_words as _due
from costsched.service.views import status_document
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


def launched(store: PriceStore, tmp_path: Path, deadline: str | None) -> service.JobStatus:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "due", "run": "true", "throughputs": {"V100": 1.0}, "steps": 3600,
            "constraints": {"regions": ["us-east-1"], "markets": ["on_demand", "spot"],
                            **({"deadline": deadline} if deadline else {})}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [shown] = service.status(store, launcher, job.id, reconcile_first=False)
    return shown


def test_a_deadline_in_hours_counts_from_the_jobs_creation(store: PriceStore,
                                                           tmp_path: Path) -> None:
    shown = launched(store, tmp_path, "36h")
    assert shown.due == shown.record.created_at + timedelta(hours=36)
    [doc] = status_document([shown])
    assert doc["deadline_at"] == shown.due.isoformat()
    now = shown.record.created_at + timedelta(hours=30, minutes=30)
    assert _due(shown.due, now, final=False) == (
        f"due {shown.due:%Y-%m-%d %H:%M} UTC (in 5.50 h)")
    # Beside a placement's 0.0086 h in one `status`, at the view's one precision.
    assert _due(shown.due, now, False, places=4).endswith("(in 5.5000 h)")
    late = shown.record.created_at + timedelta(hours=37)
    assert _due(shown.due, late, final=False).endswith("(passed 1.00 h ago)")
    assert _due(shown.due, late, final=True) == f"was due {shown.due:%Y-%m-%d %H:%M} UTC"
    early = shown.due - timedelta(hours=2)
    assert _due(shown.due, late, True, "succeeded", early) == (
        f"was due {shown.due:%Y-%m-%d %H:%M} UTC: met, it finished 2.00 h before")
    assert _due(shown.due, late, True, "succeeded", late) == (
        f"was due {shown.due:%Y-%m-%d %H:%M} UTC: missed, it finished 1.00 h after")


def test_a_deadline_given_as_a_time_is_that_time_and_none_is_none(store: PriceStore,
                                                                 tmp_path: Path) -> None:
    at = (datetime.now(timezone.utc) + timedelta(days=3)).replace(microsecond=0, second=0)
    shown = launched(store, tmp_path, at.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert shown.due == at
    other = tmp_path / "other"
    other.mkdir()
    plain = launched(PriceStore(str(other / "s.sqlite")), other, None)
    assert plain.due is None and status_document([plain])[0]["deadline_at"] is None

