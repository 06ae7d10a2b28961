"""A start's budget check charges the next watch interval as the watch will: for as long
as the watching daemon's passes are apart when they come later than its interval (a busy
machine), so that the amount its refusal names lets the job run past the next pass,
rather than a start that the next pass stops at once (local launcher, real subprocesses,
a real SQLite store)."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from pathlib import Path

import pytest

from costsched import measured, own_budget
from costsched.config import BudgetsConfig
from costsched.service.jobs import caps
from costsched.store.leases import holder_name
from tests.costsched.service.test_budget_caps import USD_PER_HOUR, local  # noqa: F401
from tests.costsched.service.test_budget_start import _now, _stopped_at_cap

NEXT = re.compile(r"\+ \$([0-9.]+) for the next watch interval")


def _named(output: str) -> tuple[float, float]:
    """The amount a refusal names and its next interval's charge."""
    amount = re.search(r"--budget ([0-9.]+)`", output)
    ahead = NEXT.search(output)
    assert amount and ahead, output
    return float(amount.group(1)), float(ahead.group(1))


def test_a_start_charges_the_next_interval_as_long_as_the_watchs_passes_are_apart(
        tmp_path: Path, local, cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    store, launcher = local
    monkeypatch.setattr(measured, "MIN_TRAINING_SECONDS", 1.0)  # its pace, measured soon
    # Its rest (a few seconds) charged as no shorter than the interval: the span is said.
    monkeypatch.setattr(own_budget, "REST_MARGIN_SECONDS", math.inf)
    job_id = _stopped_at_cap(store, launcher, tmp_path, monkeypatch)

    # No daemon: one configured interval (30 s) ahead.
    _, on_time = _named(cli("start", str(job_id), "--wait", "0").output)
    assert on_time == pytest.approx(30 * USD_PER_HOUR / 3600, abs=0.006)

    # The supervisor's last two passes came 61 s apart: its next check charges 61 s.
    holder, now = holder_name(), _now()
    store.daemons.register(holder, kind="auto", tasks=("watch",), watch_seconds=30,
                           log="", at=now - timedelta(seconds=61))
    store.daemons.passed(holder, "ok", "", now - timedelta(seconds=61))
    store.daemons.passed(holder, "ok", "", now)
    refused = cli("start", str(job_id), "--wait", "0")
    assert refused.exit_code == 2, refused.output
    amount, late = _named(refused.output)
    assert late == pytest.approx(61 * USD_PER_HOUR / 3600, abs=0.006) and late > on_time
    # A budget that fits one configured interval but not the late one is refused too.
    short = cli("start", str(job_id), "--budget", f"{amount - (late - on_time):.2f}",
                "--wait", "0")
    assert short.exit_code == 2, short.output
    # The amount named starts it, and the watch's check at 61 s does not stop it.
    started = cli("start", str(job_id), "--budget", str(amount), "--wait", "0")
    assert started.exit_code == 0, started.output
    checked = caps.enforce(store, launcher, BudgetsConfig(), _now(), interval_seconds=61)
    assert [e.kind for e in checked] in ([], ["budget"]), checked  # at most its 80% warning
    assert store.jobs.get(job_id).state != "stopped"  # not stopped at its cap
    store.daemons.unregister(holder)
