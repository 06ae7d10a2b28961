"""The HTML report and the dashboard's Spend page in a real headless Chromium at 1280
pixels, on a store with long offering names, a gang of two nodes and moves between them,
its charges at four decimals and a charge under their last:
every table fits the window (none wider, no column one has to scroll to), no word is
broken inside, and the columns left out by default are under their table, folded."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.report.html import WHOLE_MOST
from costsched.store import PriceStore
from tests.costsched.dashboard.test_browser import (  # noqa: F401 - fixtures
    WIDTHS,
    Server,
    _chromium,
    browser,
)
from tests.costsched.dashboard.test_browser_pages import BROKEN_WORDS
from tests.costsched.report.report_stores import _observe
from tests.costsched.report.scenario import NOW, T0, advance, at, fill

# Offerings as long as the clouds name them.
LONG_A = ("gcp", "northamerica-northeast1", "northamerica-northeast1-b",
          "n1-standard-8+1xnvidia-tesla-t4", "spot", "linux")
LONG_B = ("aws", "ap-southeast-2", "ap-southeast-2a", "g4dn.12xlarge", "spot", "linux")
# Each table (the heading before it) whose right edge passes the window's.
WIDER = """
Array.from(document.querySelectorAll('table')).filter((table) =>
  table.getBoundingClientRect().right > window.innerWidth + 1).map((table) => {
    let at = table;
    while (at && at.tagName !== 'H2') at = at.previousElementSibling || at.parentElement;
    return at ? at.innerText : '?';
  })"""


def gang_moving(store: PriceStore) -> None:
    """A gang of two nodes (50 GB checkpoints) launched on LONG_A, migrated to LONG_B at
    2 h, preempted there at 4 h and recovered on LONG_A."""
    for key, gpu, usd in ((LONG_A, "T4", 0.1234), (LONG_B, "T4", 0.5678)):
        _observe(store, key, gpu, at(-10), usd)
    spec = {"name": "a-gang-of-two-with-a-long-name", "throughputs": {"T4": 1.0},
            "steps": 1e6, "num_nodes": 2, "checkpoint": {"size_gb": 50},
            "constraints": {"budget": 20.0}}
    gang = store.jobs.create(spec["name"], {"spec": spec, "source": "test"}, 1e6, at=at(-1))
    store.jobs.place(gang, LONG_A, gpu_model="T4", gpu_count=1, at=at(0), usd_per_hour=0.2,
                     reason="launch", instance="g-1")
    moving = store.moves.create(gang, "migration", [], at=at(2), source_instance="g-1")
    moving = advance(store, moving, "g-2", [("checkpoint_verified", 2)])
    store.jobs.place(gang, LONG_B, gpu_model="T4", gpu_count=1, at=at(2.5), usd_per_hour=0.6,
                     reason="migration", instance="g-2", keep_open=True)
    moving = advance(store, moving, "g-2", [("target_launched", 2.5), ("target_running", 3)])
    store.jobs.end_placement(gang, at(3), instance="g-1")
    advance(store, moving, "g-2", [("source_terminated", 3), ("done", 3)])
    store.jobs.end_placement(gang, at(4), instance="g-2")
    moving = store.moves.create(gang, "recovery", [], at=at(4), source_instance="g-2")
    moving = advance(store, moving, "g-3", [("checkpoint_verified", 4)])
    store.jobs.place(gang, LONG_A, gpu_model="T4", gpu_count=1, at=at(4.5), usd_per_hour=0.2,
                     reason="recovery", instance="g-3")
    advance(store, moving, "g-3", [("target_launched", 4.5), ("target_running", 5),
                                   ("source_terminated", 5), ("done", 5)])
    store.jobs.record_step(gang, 5 * 3600, at=at(NOW))
    # A job of one second: a charge of $0.000167 ('$0.0002' at four decimals).
    tiny = store.jobs.create("tiny", {"spec": {**spec, "name": "tiny", "num_nodes": 1},
                                      "source": "test"}, 1e6, at=at(-1))
    store.jobs.place(tiny, LONG_B, gpu_model="T4", gpu_count=1, at=at(1), usd_per_hour=0.6,
                     reason="launch", instance="t-1")
    store.jobs.end_placement(tiny, at(1 + 1 / 3600))


@pytest.fixture()
def long_names(db_path: Path) -> Path:
    store = PriceStore(str(db_path))
    fill(store)
    gang_moving(store)
    store.dispose()
    return db_path


def open_file(browser, page: Path) -> None:  # noqa: ANN001, F811
    width, height = WIDTHS["desktop"]
    browser.send("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        session=True)
    browser.send("Page.navigate", {"url": page.resolve().as_uri()}, session=True)
    browser.wait_for("document.readyState === 'complete' && "
                     "document.querySelectorAll('h2').length > 5")


def test_every_table_of_the_html_report_fits_1280_pixels(long_names, cli, browser,  # noqa: ANN001, F811
                                                         tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    cli("report", "--until", at(NOW).isoformat(), "--html", page)
    text = page.read_text()
    assert "northamerica-northeast1-b n1-standard-8+1xnvidia-tesla-t4" in text
    assert "<summary>more columns: priced total $" in text
    try:
        open_file(browser, page)
        assert browser.js(WIDER) == []
        assert browser.js("document.documentElement.scrollWidth") <= 1280
        assert browser.js(BROKEN_WORDS.replace("table.report td", "table td")) == []
        # The moves' prices as decided are folded under their table, and unfold.
        browser.js("document.querySelectorAll('details').forEach((d) => d.open = true)")
        assert browser.js(WIDER) == []
        assert browser.problems == []
    finally:
        browser.send("Page.navigate", {"url": "about:blank"}, session=True)


def test_every_table_of_the_spend_page_fits_1280_pixels(long_names, browser) -> None:  # noqa: ANN001, F811
    server = Server(str(long_names), long_names.parent / "instances")
    try:
        browser.open(f"{server.url}spend?since={T0:%Y-%m-%d}", *WIDTHS["desktop"])
        text = browser.js("document.querySelector('main').innerText")
        assert "n1-standard-8+1xnvidia-tesla-t4" in text and "more columns: priced" in text
        browser.js("document.querySelectorAll('details').forEach((d) => d.open = true)")
        assert browser.js(WIDER) == []
        wide = browser.js("Array.from(document.querySelectorAll('.scroll')).filter("
                          "(s) => s.scrollWidth > s.clientWidth + 1).length")
        assert wide == 0  # no table scrolls sideways
        assert browser.js("document.documentElement.scrollWidth") <= 1280
        assert browser.js(BROKEN_WORDS) == []
        assert browser.problems == []
    finally:
        browser.leave()  # before the server stops: its live stream does not try again
        server.stop()


# Each hyphenated word of the Spend per job table's name and state cells ("charlm-native",
# "ended-short"), up to WHOLE_MOST characters, that the page breaks over two lines.
BROKEN_HYPHENATED = ("""
(() => {
  const WHOLE_MOST = """ + str(WHOLE_MOST) + """;
  const heads = Array.from(document.querySelectorAll('h2'));
  const title = heads.find((h) => h.innerText === 'Spend per job');
  let table = title.nextElementSibling;
  while (table.tagName !== 'TABLE') table = table.nextElementSibling;
  const names = Array.from(table.tHead.rows[0].cells).map((c) => c.innerText);
  const columns = [names.indexOf('name'), names.indexOf('state')];
  return Array.from(table.tBodies[0].rows).flatMap((row) => columns.flatMap((n) => {
    const cell = row.cells[n];
    const broken = [];
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      for (const m of node.data.matchAll(/[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+/g)) {
        if (m[0].length > WHOLE_MOST) continue;  // a longer word may break at its hyphens
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
        if (tops.size > 1) broken.push(m[0]);
      }
    }
    return broken;
  }));
})()""")


def test_job_names_and_states_keep_their_words_whole_at_1280_pixels(
        long_names, cli, browser, tmp_path: Path) -> None:  # noqa: ANN001, F811
    """A job named charlm-native that exited 0 short of its steps (ended-short), among
    jobs with long offering names: neither its name nor its state wraps at a hyphen."""
    store = PriceStore(str(long_names))
    spec = {"name": "charlm-native", "throughputs": {"T4": 1.0}, "steps": 1e6}
    short = store.jobs.create("charlm-native", {"spec": spec, "source": "test"}, 1e6,
                              at=at(-1))
    store.jobs.place(short, LONG_B, gpu_model="T4", gpu_count=1, at=at(1), usd_per_hour=0.6,
                     reason="launch", instance="s-1")
    store.jobs.record_step(short, 100.0, at=at(2))
    store.jobs.end_placement(short, at(2))
    store.jobs.transition(short, "succeeded", at=at(2))
    store.dispose()
    page = tmp_path / "report.html"
    cli("report", "--until", at(NOW).isoformat(), "--html", page)
    assert "ended-short" in page.read_text()
    try:
        open_file(browser, page)
        assert browser.js(BROKEN_HYPHENATED) == []
        assert browser.js(WIDER) == []
        assert browser.problems == []
    finally:
        browser.send("Page.navigate", {"url": "about:blank"}, session=True)
