"""A job's dollars read the same in one report: its total in "Spend per job" and its
dollars in "Estimate versus actual, per job" are one figure, in the text and the JSON (an
older report gave a running job $0.002123 in one and $0.002013 in the other: the
estimate's cut where its step was last read)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pandas as pd

from costsched.cli import common
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report.test_estimates import EAST, at, finish, planned_job


def _store(db_path: Path) -> None:
    store = PriceStore(str(db_path))
    store.ingest(pd.DataFrame([(*EAST, "V100", 1, 8, 61.0, 0.07962, pd.Timestamp(at(-1)),
                                "test")], columns=OBSERVATION_COLUMNS))
    finish(store, planned_job(store, "done"), 8)
    running = planned_job(store, "running")  # its step last read 7 h in; the report at 11 h
    store.jobs.record_step(running, 18_000, at=at(7))
    store.dispose()


def _cells(text: str, title: str) -> list[list[str]]:
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if line.strip() == title) + 1
    head = [h.strip() for h in lines[top + 1].strip("┃").split("┃")]
    end = next(i for i in range(top, len(lines)) if lines[i].startswith("└"))
    rows = [[c.strip() for c in line.strip("│").split("│")] for line in lines[top + 3:end]]
    return [head, *rows]


def test_a_running_job_has_one_total(db_path: Path, cli, monkeypatch) -> None:  # noqa: ANN001
    _store(db_path)
    monkeypatch.setattr(common.console, "width", 400)
    until = (at(11) + timedelta(seconds=7)).isoformat()
    document = json.loads(cli("report", "--until", until, "--json").stdout)
    spent = {r["name"]: r["usd"] for r in document["jobs"]}
    compared = {r["name"]: r["usd"] for r in document["estimates"]}
    assert compared == spent, (compared, spent)

    text = cli("report", "--until", until).output
    head, *rows = _cells(text, "Spend per job")
    total = {r[head.index("name")]: r[head.index("total $")] for r in rows}
    head, *rows = _cells(text, "Estimate versus actual, per job")
    dollars = [h for h in head if h.endswith("$") and h != "expected $"]
    assert len(dollars) == 1, head
    actual = {r[head.index("name")]: r[head.index(dollars[0])] for r in rows}
    assert actual == total, (actual, total)
    assert all(re.fullmatch(r"\$[\d.,]+", v) for v in total.values()), total
