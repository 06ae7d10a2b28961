"""A finished job's spend after a price is imported that was in effect while it ran: it is
charged from the stored prices of its time (the documented rule: no price is frozen at
placement), and `status` says so under the job, in one line a placement, with the price it
was placed at. The CLI over an in-memory launcher."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.cli import jobs as cli_jobs
from costsched.service import jobs as service
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_start_secrets import _spec


def test_a_finished_job_charged_from_a_price_imported_later_says_so(
        cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    store = PriceStore(str(db_path))
    now = datetime.now(timezone.utc)
    set_prices(store, {"us-east-1a": 1.0}, now - timedelta(hours=2))
    launcher = FakeLauncher()
    [job] = service.launch(store, _spec(tmp_path, "done", []), launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    launcher.set(str(_open_placement(store, job.id)["instance"]), "succeeded")
    service.reconcile(store, launcher, at=now + timedelta(hours=1))  # it ran an hour
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)

    before = cli("status", "done")
    assert before.exit_code == 0, before.output
    assert "charged from the stored prices" not in before.output

    set_prices(store, {"us-east-1a": 3.0}, now - timedelta(hours=1))  # in effect as it ran
    after = cli("status", "done")
    assert after.exit_code == 0, after.output
    [line] = [x.strip() for x in after.output.splitlines() if "when placed" in x]
    assert line.startswith(f"job {job.id}: launch on aws us-east-1a ")
    assert line.endswith("is charged from the stored prices of its time: $3.0000/h on "
                         "average ($1.0000/h when placed)"), line
    store.dispose()
