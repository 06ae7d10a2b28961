"""Every view of the report carries the same tables and writes a figure alike: the HTML
file has every section the text has ("Budgets now" included); the columns left out by
default are one choice (the terminal's without --wide, folded under the table in the HTML
file); the estimates' hours, a budget's spend and the egress table's GB and $ per GB read
at one rule, whatever else the table holds."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from html import unescape
from pathlib import Path

from costsched.report.cells import format_cell, shown_rows
from costsched.report.tables import TABLES
from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, NOW, T0, at, fill


def titles_of_text(text: str) -> list[str]:
    candidates = [t.title for t in TABLES] + ["Budgets now"]
    return [t for t in candidates if re.search(rf"^\s*{re.escape(t)}\s*$", text, re.M)]


def test_the_html_file_has_every_table_the_text_has(db_path: Path, cli, tmp_path) -> None:  # noqa: ANN001
    fill(PriceStore(str(db_path)))
    page = tmp_path / "report.html"
    text = cli("report", "--until", at(NOW).isoformat(), "--html", page).output
    html = [unescape(t) for t in re.findall(r"<h2>([^<]*)</h2>", page.read_text())]
    shown = titles_of_text(text)
    assert "Budgets now" in shown and len(shown) >= 8
    assert [t for t in html if t in shown] == shown  # each, in the text's order


def test_the_moves_prices_as_decided_show_with_wide(db_path: Path, cli, monkeypatch) -> None:  # noqa: ANN001
    from costsched.cli import common

    monkeypatch.setattr(common.console, "width", 400)  # room for every column
    fill(PriceStore(str(db_path)))
    until = at(NOW).isoformat()
    default = cli("report", "--until", until).output
    wide = cli("report", "--until", until, "--wide").output
    assert default.count("priced") == 5  # named once each, in the caption alone
    assert "not shown: priced total $, priced egress $, priced restart $" in default
    assert "not shown: priced" not in wide and wide.count("priced") >= 5  # their headings


def frugal(db: Path, minutes: float, usd_per_hour: float, budget: float | None = 3.0,
           name: str = "frugal") -> None:
    """A job that ran `minutes` at `usd_per_hour` against its `budget`."""
    store = PriceStore(str(db))
    spec = {"name": name, "throughputs": {"V100": 1.0}, "steps": 10.0,
            "constraints": {"budget": budget}}
    job = store.jobs.create(name, {"spec": spec}, 10.0, at=T0)
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=T0,
                     usd_per_hour=usd_per_hour, reason="launch", instance=f"{name}-1")
    store.jobs.end_placement(job, T0 + timedelta(minutes=minutes))
    store.jobs.transition(job, "succeeded", at=T0 + timedelta(minutes=minutes))
    store.dispose()


def test_a_budgets_spend_reads_as_the_jobs_spend(db_path: Path, cli) -> None:  # noqa: ANN001
    frugal(db_path, 1, 0.111)  # $0.00185
    frugal(db_path, 0.25, 0.111, None, "tiny")  # $0.00046: four decimals all the same
    text = cli("report", "--until", (T0 + timedelta(hours=1)).isoformat()).output
    spend, _, budgets = text.partition("Budgets now")
    assert "$0.0019" in spend and "$0.00185" not in spend
    [row] = [line for line in budgets.splitlines() if "frugal" in line]
    assert "$0.0019" in row and "$0.00185" not in row


def estimate(job_id: int, hours: float, expected: float, usd: float) -> dict:
    return dict(job_id=job_id, name=f"j{job_id}", model="m", gpu="1xT4", state="succeeded",
                done=1.0, expected_training_hours=expected, training_hours=hours,
                training_hours_ratio=hours / expected, expected_usd=0.0491, usd=usd,
                usd_ratio=usd / 0.0491, expected_preemptions=0.0, preemptions=0,
                vs_estimate="")


def test_a_jobs_estimate_hours_read_alike_whatever_other_rows_the_table_has() -> None:
    scale = {"usd": 5, "hours": 4}
    alone = [estimate(1, 0.0213, 0.0213, 0.00472)]
    beside = [*alone, estimate(2, 0.0152, 0.0240, 0.003)]  # its 0.63x needs 4 decimals

    def written(rows: list[dict]) -> list[str]:
        places, shown = shown_rows("estimates", {"estimates": rows, "jobs": [],
                                                 "scale": scale})
        return [format_cell(c, shown[0][c], places)
                for c in ("expected_training_hours", "training_hours", "usd")]

    assert written(alone) == written(beside) == ["0.0213", "0.0213", "$0.00472"]


def test_the_egress_columns_read_at_one_precision_zero_too() -> None:
    def move(gb: float, usd_per_gb: float) -> dict:
        return dict(job_id=1, name="j", at=T0, from_cloud="aws", from_region="us-east-1",
                    to_cloud="aws", to_region="us-west-2", gb=gb, usd_per_gb=usd_per_gb,
                    usd=gb * usd_per_gb)

    places, rows = shown_rows("egress", {"egress": [move(0.0, 0.0), move(0.001, 0.12)]})
    assert [format_cell("gb", r["gb"], places) for r in rows] == ["0.0000", "0.0010"]
    assert [format_cell("usd_per_gb", r["usd_per_gb"], places) for r in rows] == [
        "$0.0000", "$0.1200"]
    assert not math.isnan(places["figures"])
