"""A running job whose work is not given: `launch` and `status` say so once, in one line
that says both that its figures are for an assumed hour (where they are shown) and that
its total is not known and its rest cannot be priced, then the key that gives the work."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers import make_launcher
from tests.costsched.service.test_rest_priced import instances, store  # noqa: F401
from tests.costsched.service.test_work_not_given import running_task_without_work


def _lines(store: PriceStore, figures: bool,  # noqa: F811
           capsys: pytest.CaptureFixture) -> tuple[int, list[str]]:
    from costsched.cli import status_lines

    now = datetime.now(timezone.utc).replace(microsecond=0)
    shown = service.status(store, make_launcher("local"), None, at=now, reconcile_first=False)
    capsys.readouterr()
    status_lines.print_status(shown, json_out=False, assumed_figures=figures)
    return shown[0].record.id, capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("figures", [False, True], ids=["status", "launch"])
def test_the_work_not_given_is_said_once_in_one_line(
        store: PriceStore, instances: Path, capsys: pytest.CaptureFixture,  # noqa: F811
        figures: bool) -> None:
    running_task_without_work(store, instances, datetime.now(timezone.utc).replace(microsecond=0))
    job, lines = _lines(store, figures, capsys)
    said = [line.strip() for line in lines if "not given" in line]
    assert len(said) == 1, lines
    [line] = said
    assert line.startswith(f"job {job}: the work is not given in plain.yaml, so its total "
                           "is not known and the rest cannot be priced"), line
    assert "a total needs the work: `costsched: {hours: H}`" in line, line
    assert ("figures are for 1 h of work on 1xV100" in line) == figures, line
    assert sum(line.count("not known") for line in lines) == 1, lines
