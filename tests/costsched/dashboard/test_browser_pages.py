"""The dashboard's pages in a real headless Chromium, where they meet no running job or a
long history: the Prices page shows prices with no job running, a chart with nothing to
draw says so, a time axis never repeats a label (over seconds, hours or days), the
Spend page's tables fit a 1280-pixel window without scrolling sideways and without breaking
a word inside ('succee-ded'), every column of every table of every page is in view at 1280
pixels (a re-priced placement's long '$/h charged' included), and a small spend beside a
large budget still shows, on a logarithmic axis whose ticks read as money the user set
('$10', '$0.50', '$0.001') and never overlap."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from costsched.service.prices import import_prices
from costsched.store import PriceStore
from tests.costsched.dashboard.test_browser import (  # noqa: F401 - fixtures
    EXAMPLES,
    WIDTHS,
    Server,
    _chromium,
    browser,
)
from tests.costsched.report.scenario import EAST, T0, fill

TICKS = ("Object.values(Chart.instances).map((c) => c.scales.x.ticks.map((t) => t.label))")
# Each word (a run of letters and digits) of the report tables' cells whose rendered boxes
# stand on more than one line: a word broken inside. Long tokens may still break between
# words, at a space or after a hyphen ('n1-standard-8').
BROKEN_WORDS = """
Array.from(document.querySelectorAll('table.report td')).flatMap((cell) => {
  const broken = [];
  const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    for (const m of node.data.matchAll(/[A-Za-z0-9]+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
  return broken;
})"""


# Each table (its head's text) whose last column stands, on some row, beyond the window or
# beyond the right edge of the box that scrolls it: a column one has to scroll to.
LAST_COLUMN_OUT = """
Array.from(document.querySelectorAll('main table')).filter((table) => {
  const box = (table.closest('.scroll') || table.parentElement).getBoundingClientRect();
  const right = Math.min(box.right, window.innerWidth);
  return Array.from(table.rows).some((row) => row.cells.length &&
    row.cells[row.cells.length - 1].getBoundingClientRect().right > right + 1);
}).map((table) => (table.tHead || table).innerText.slice(0, 80))"""


@pytest.fixture()
def no_jobs(tmp_path: Path) -> tuple[str, Path]:
    db = tmp_path / "store.sqlite"
    import_prices(str(db), [EXAMPLES / "demo" / "prices-before.csv"], partial=False)
    return str(db), tmp_path / "instances"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, int, int]]:
    """The dashboard of the report's scenario (jobs over six hours), a job placed for four
    days and one for twenty seconds: one process for the module's tests, which only read."""
    tmp_path = tmp_path_factory.mktemp("history")
    db = tmp_path / "store.sqlite"
    store = PriceStore(str(db))
    fill(store)
    spec = {"name": "four-days", "throughputs": {"V100": 1.0}, "steps": 10.0}
    long = store.jobs.create("four-days", {"spec": spec}, 10.0, at=T0)
    store.jobs.place(long, EAST, gpu_model="V100", gpu_count=1, at=T0, usd_per_hour=1.0,
                     reason="launch", instance="l-1")
    store.jobs.transition(long, "running", at=T0)
    store.jobs.end_placement(long, T0 + timedelta(days=4, hours=3))
    store.jobs.transition(long, "succeeded", at=T0 + timedelta(days=4, hours=3))
    short = store.jobs.create("twenty-seconds", {"spec": {**spec, "name": "twenty-seconds"}},
                              10.0, at=T0)
    before = T0 - timedelta(days=30)  # out of the Spend page's period below
    store.jobs.place(short, EAST, gpu_model="V100", gpu_count=1, at=before,
                     usd_per_hour=1.0, reason="launch", instance="s-1")
    store.jobs.end_placement(short, before + timedelta(seconds=20))
    store.dispose()
    server = Server(str(db), tmp_path / "instances")
    yield server, long, short
    server.stop()


def test_prices_without_a_running_job_and_empty_charts_say_so(no_jobs, browser) -> None:  # noqa: F811
    db, instances = no_jobs
    server = Server(db, instances)
    try:
        browser.open(server.url + "prices", *WIDTHS["desktop"])
        text = browser.js("document.body.innerText")
        assert "Cheapest offerings per GPU model" in text and "no job runs" in text
        assert browser.js("document.querySelectorAll('main table tbody tr').length") >= 3
        assert "$0.9200" in text  # the demo's zone a, per hour

        browser.open(server.url + "spend", *WIDTHS["desktop"])  # nothing placed yet
        notes = browser.wait_for("Array.from(document.querySelectorAll('.chart-empty'))"
                                 ".map((n) => n.innerText)")
        assert notes == ["No data to chart in this period."] * 3
        assert browser.js("document.querySelectorAll('canvas').length") == 0
        assert browser.problems == []
    finally:
        browser.leave()  # before the server stops: its live stream does not try again
        server.stop()


def test_time_axes_and_the_spend_tables_read_at_a_glance(history, browser) -> None:  # noqa: F811
    server, long, short = history
    try:
        for job in (1, long, short):  # six hours, four days and twenty seconds
            browser.open(f"{server.url}jobs/{job}", *WIDTHS["desktop"])
            [labels] = browser.wait_for(f"({TICKS}).filter((t) => t.length)", timeout=60)
            assert len(labels) >= 2 and len(set(labels)) == len(labels), labels

        browser.open(f"{server.url}spend?since={T0:%Y-%m-%d}", *WIDTHS["desktop"])
        browser.wait_for("document.querySelectorAll('canvas[data-drawn]').length >= 3")
        wide = browser.js("Array.from(document.querySelectorAll('.scroll')).filter("
                          "(s) => s.scrollWidth > s.clientWidth + 1).map("
                          "(s) => s.previousElementSibling.innerText)")
        assert wide == []  # every table fits: no sideways scrolling at 1280 pixels
        assert browser.js("document.documentElement.scrollWidth") <= 1280
        assert browser.js(BROKEN_WORDS) == []  # and no word was broken inside to fit
        assert browser.js("Array.from(document.querySelectorAll('table.report td')).filter("
                          "(c) => c.innerText === 'succeeded').length") >= 1  # one was tested
        assert browser.problems == []
    finally:
        browser.leave()  # before the server stops: its live stream does not try again


def test_every_column_of_every_table_is_in_view(history, browser) -> None:  # noqa: F811
    server, _, _ = history
    try:
        browser.open(server.url, *WIDTHS["desktop"])
        jobs = browser.js("[...new Set(Array.from(document.querySelectorAll("
                          "'main a[href^=\"/jobs/\"]')).map((a) => a.getAttribute('href')))]")
        assert "/jobs/1" in jobs and len(jobs) >= 4
        pages = [*(j.lstrip("/") for j in jobs), "", f"spend?since={T0:%Y-%m-%d}", "prices"]
        for page in pages:
            browser.open(server.url + page, *WIDTHS["desktop"])
            if page == "jobs/1":  # a placement charged at prices that changed while it ran
                assert "on average" in browser.js("document.querySelector('main').innerText")
            assert browser.js(LAST_COLUMN_OUT) == [], page
            assert browser.js("document.documentElement.scrollWidth") <= 1280, page
        assert browser.problems == []
    finally:
        browser.leave()  # before the server stops: its live stream does not try again


def frugal(tmp_path: Path, budget: float, usd_per_hour: float) -> tuple[str, Path]:
    """A job that ran a minute at `usd_per_hour` against its `budget`."""
    db = tmp_path / "store.sqlite"
    store = PriceStore(str(db))
    spec = {"name": "frugal", "throughputs": {"V100": 1.0}, "steps": 10.0,
            "constraints": {"budget": budget}}
    job = store.jobs.create("frugal", {"spec": spec}, 10.0, at=T0)
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=T0,
                     usd_per_hour=usd_per_hour, reason="launch", instance="f-1")
    store.jobs.end_placement(job, T0 + timedelta(minutes=1))
    store.jobs.transition(job, "succeeded", at=T0 + timedelta(minutes=1))
    store.dispose()
    return str(db), tmp_path / "instances"


@pytest.fixture(scope="module")
def frugal_dashboard(tmp_path_factory: pytest.TempPathFactory
                     ) -> Iterator[Callable[[float, float], Server]]:
    """The dashboard of `frugal`'s store for (budget, usd_per_hour): one process for each,
    whichever tests of the module look at it (they only read)."""
    made: dict[tuple[float, float], Server] = {}

    def of(budget: float, usd_per_hour: float) -> Server:
        if (budget, usd_per_hour) not in made:
            made[budget, usd_per_hour] = Server(*frugal(tmp_path_factory.mktemp("frugal"),
                                                        budget, usd_per_hour))
        return made[budget, usd_per_hour]

    yield of
    for server in made.values():
        server.stop()


def test_a_small_spend_beside_a_large_budget_shows(frugal_dashboard, browser) -> None:  # noqa: F811
    server = frugal_dashboard(900, 1.2)  # a job that spent two cents of its $900 budget
    try:
        browser.open(server.url, *WIDTHS["desktop"])
        browser.wait_for("document.querySelectorAll('canvas[data-drawn]').length >= 1")
        axis, spent, budget = browser.js(
            "(() => { const c = Object.values(Chart.instances)[0];"
            " const bar = (name) => c.getDatasetMeta(c.data.datasets.findIndex("
            "(d) => d.label === name)).data[0].height;"
            " return [c.scales.y.type, bar('spent'), bar('budget')]; })()")
        assert axis == "logarithmic"
        assert spent >= 0.05 * budget > 0, (spent, budget)  # on a linear axis: 0.00002x
        assert "USD, logarithmic scale" in browser.js(
            "Object.values(Chart.instances)[0].options.scales.y.title.text")
        assert browser.problems == []
    finally:
        browser.leave()  # before the server stops: its live stream does not try again


def given_tick(value: float) -> str:
    """An axis tick as money the user sets reads: whole dollars alone ('$10', '$1,000'),
    else the fewest decimals, at least two, that write it ('$0.50', '$0.001')."""
    if value >= 1 and value == round(value):
        return f"${value:,.0f}"
    places = next(p for p in range(2, 9) if abs(round(value, p) - value) < 1e-12)
    return f"${value:,.{places}f}"


@pytest.mark.parametrize("budget, usd_per_hour", [(10, 0.06), (900, 1.2)])
def test_a_logarithmic_money_axis_reads_as_set_and_never_overlaps(
        frugal_dashboard, browser, budget, usd_per_hour) -> None:  # noqa: F811
    server = frugal_dashboard(budget, usd_per_hour)
    try:
        browser.open(server.url, *WIDTHS["desktop"])
        browser.wait_for("document.querySelectorAll('canvas[data-drawn]').length >= 1")
        ticks, size = browser.js(
            "(() => { const y = Object.values(Chart.instances)[0].scales.y;"
            " return [y.ticks.filter((t) => t.label !== '' && t.label !== undefined)"
            ".map((t) => [t.value, t.label, y.getPixelForValue(t.value)]),"
            " Chart.defaults.font.size]; })()")
        assert len(ticks) >= 3, ticks
        assert [label for _, label, _ in ticks] == [given_tick(v) for v, _, _ in ticks]
        pixels = sorted(y for _, _, y in ticks)
        gaps = [b - a for a, b in zip(pixels, pixels[1:], strict=False)]
        assert min(gaps) >= 1.5 * size, (ticks, size)  # a line of text apart and more
        assert browser.problems == []
    finally:
        browser.leave()  # before the server stops: its live stream does not try again
