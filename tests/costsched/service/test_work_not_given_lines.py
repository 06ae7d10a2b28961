"""A running job whose work is not given: `migrate --dry-run` says why it stays in one
sentence on one line, and `status`, which shows no figure of the assumed hour, does not
say its figures are for one; it says what gives the total."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.cli.migrate import _advice_lines
from costsched.service import jobs as service
from costsched.store import PriceStore
from costsched.work import NOT_KNOWN
from launchers import make_launcher
from tests.costsched.service.test_rest_priced import instances, store  # noqa: F401
from tests.costsched.service.test_work_not_given import running_task_without_work


def test_why_it_stays_is_one_sentence_on_one_line(
        store: PriceStore, instances: Path) -> None:  # noqa: F811
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = running_task_without_work(store, instances, now)
    [advice] = service.migrate(store, make_launcher("local"), job, dry_run=True, at=now)
    assert _advice_lines(advice) == [
        f"job {job} (plain): staying: {NOT_KNOWN} and the rest cannot be priced"]


def test_status_says_what_gives_the_total_not_figures_it_does_not_show(
        store: PriceStore, instances: Path, capsys: pytest.CaptureFixture) -> None:  # noqa: F811
    from costsched.cli import status_lines

    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = running_task_without_work(store, instances, now)
    shown = service.status(store, make_launcher("local"), job, at=now,
                           reconcile_first=False)
    capsys.readouterr()
    status_lines.print_status(shown, json_out=False)
    out = " ".join(capsys.readouterr().out.split())
    assert "figures are for" not in out, out
    assert (f"job {job}: the work is not given in plain.yaml, so its total is not known and "
            "the rest cannot be priced; a total needs the work: `costsched: {hours: H}`"
            ) in out, out
