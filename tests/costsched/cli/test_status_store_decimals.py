"""A finished job's cost reads alike in `status JOB`, `status`, `report`, `report --job`
and the HTML report, whatever other jobs the store holds or the command shows: charged money
reads at four decimals, whatever the store's smallest charge or the jobs on screen."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, ON_DEMAND, WEST, at, observe


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    return result.stdout


def _job(store: PriceStore, name: str, legs: list[tuple[tuple, float, int]]) -> int:
    spec = {"name": name, "run": "true", "steps": 10}
    job = store.jobs.create(name, {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    t = at(1)
    for key, price, seconds in legs:
        store.jobs.place(job, key, gpu_model="V100", gpu_count=1, at=t, usd_per_hour=price,
                         reason="launch", instance=f"{name}-{seconds}")
        t += timedelta(seconds=seconds)
    store.jobs.end_placement(job, t)
    store.jobs.transition(job, "succeeded", at=t)
    return job


def small_and_big(db: str) -> tuple[int, int]:
    """'small' costs $0.000243 + $0.000412 = $0.000655 ('$0.0006' as its parts read).
    'big' costs $0.8202377 (98 s at $30.13118/h), which once read '$0.82024' in `status
    big` and '$0.820238' in `status` beside 'small'. Their ids."""
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0243)])
    observe(store, WEST, [(0, 0.0412)])
    observe(store, ON_DEMAND, [(0, 30.13118)])
    small = _job(store, "small", [(EAST_A, 0.0243, 36), (WEST, 0.0412, 36)])
    big = _job(store, "big", [(ON_DEMAND, 30.13118, 98)])
    store.dispose()
    return small, big


def test_a_jobs_cost_reads_alike_whatever_else_is_shown(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    _, big = small_and_big(db)

    def cost(text: str) -> str:
        found = re.search(rf"│\s*{big}\s*│\s*big\s*│.*?(\$[\d.,]+)", text)
        assert found is not None, text
        return found.group(1)

    alone = cost(_run("status", "--db", db, "--no-reconcile", str(big)))
    every = cost(_run("status", "--db", db, "--no-reconcile"))
    report = cost(_run("report", "--db", db))
    one = cost(_run("report", "--db", db, "--job", str(big)))
    assert alone == every == report == one == "$0.8202", (alone, every, report, one)
    html = tmp_path / "report.html"
    _run("report", "--db", db, "--job", str(big), "--html", str(html))
    assert set(re.findall(r"\$0\.8202\d*", html.read_text())) == {alone}
