"""`migrate --dry-run` of a running job whose work is not given says so once: its line says
that the work is not given (its rest cannot be priced) and the note under it only what
gives the work, never a second 'the work is not given'."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from costsched.cli.migrate import _advice_lines, _work_note
from costsched.service import jobs as service
from costsched.service import views
from costsched.store import PriceStore
from launchers import make_launcher
from tests.costsched.service.test_rest_priced import instances, store  # noqa: F401
from tests.costsched.service.test_work_not_given import running_task_without_work


def test_a_dry_run_says_the_work_is_not_given_once(store: PriceStore,  # noqa: F811
                                                    instances: Path) -> None:  # noqa: F811
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = running_task_without_work(store, instances, now)
    [advice] = service.migrate(store, make_launcher("local"), job, dry_run=True, at=now)
    work = views.assumed_works(store, [advice])[job]
    lines = [*_advice_lines(advice), f"  note: {_work_note(advice, work)}"]
    said = " ".join(lines)
    assert said.count("not given") == 1, lines
    assert lines[0] == (f"job {job} (plain): staying: the work is not given, so its total is "
                        "not known and the rest cannot be priced"), lines
    assert lines[-1].startswith("  note: a total needs the work: `costsched: {hours: H}` "
                                "(hours of work on 1xV100)") and "plain.yaml" in lines[-1]


def test_a_job_whose_line_shows_figures_keeps_the_whole_note() -> None:
    """Where the line does not say the work is not given, the note says it, and what its
    figures are for."""
    from types import SimpleNamespace

    from costsched.work import Work

    work = Work(steps=3600, hours=1.0, reference="1xV100", assumed=True, source="t.yaml")
    decision = SimpleNamespace(reason="stay: $0.30 to finish here", moves=False)
    advice = SimpleNamespace(job_id=1, name="t", not_moved="", started=False,
                             decision=decision, reason=decision.reason)
    assert _work_note(advice, work).startswith(
        "the work is not given in t.yaml: figures are for 1 h of work on 1xV100; a total "
        "needs the work")
