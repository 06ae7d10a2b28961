"""A logarithmic money axis labels ticks that cover its data: the highest label is at or
above the tallest bar and the lowest at or below the shortest, so a bar's height reads as
money ($3.01 spent beside a $3.23 budget, over cents spent by other jobs, never stands
above a highest label of $1), with labels that read as set and never overlap, at desktop
and phone widths. The lowest label is below the shortest bar, so that a bar of exactly a
tick's amount ($0.001) still has a height."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from costsched.store import PriceStore
from tests.costsched.dashboard.test_browser import (  # noqa: F401 - fixtures
    WIDTHS,
    Server,
    _chromium,
    browser,
)
from tests.costsched.dashboard.test_browser_pages import given_tick
from tests.costsched.report.scenario import EAST, T0

# Each job: (dollars spent in its one minute, its budget or None).
SPREADS = {
    "to $3.23 over $0.00018": [(0.00570, 1.0), (3.01192, 3.23), (0.00018, None),
                               (0.00142, None), (0.00020, 1.0)],
    "to $47 over $0.50": [(0.5, 47.0), (12.0, None)],
    "to $900 over $0.02": [(0.02, 900.0)],
    "to $0.0712 over $0.0031": [(0.0031, 0.0712)],
    "to $9.20 over $0.0004": [(0.0004, 9.2), (0.0061, None)],
    "to $1 over $0.001": [(0.001, 1.0), (0.02, None)],
}

# The axis's labelled ticks (value, label, pixel), the values its bars stand for, and the
# tick text's size.
AXIS = """(() => { const c = Object.values(Chart.instances)[0]; const y = c.scales.y;
  return [y.type, y.ticks.filter((t) => t.label !== '' && t.label !== undefined)
            .map((t) => [t.value, t.label, y.getPixelForValue(t.value)]),
          c.data.datasets.flatMap((d) => d.data).filter((v) => v > 0),
          Chart.defaults.font.size,
          c.data.datasets.flatMap((d, i) => c.getDatasetMeta(i).data
            .filter((bar, j) => d.data[j] > 0).map((bar) => Math.abs(bar.base - bar.y)))];
  })()"""


def spenders(tmp_path: Path, jobs: list[tuple[float, float | None]]) -> tuple[str, Path]:
    db = tmp_path / "store.sqlite"
    store = PriceStore(str(db))
    for n, (spent, budget) in enumerate(jobs, start=1):
        spec = {"name": f"job-{n}", "throughputs": {"V100": 1.0}, "steps": 10.0,
                "constraints": {"budget": budget} if budget else {}}
        job = store.jobs.create(f"job-{n}", {"spec": spec}, 10.0, at=T0)
        store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=T0,
                         usd_per_hour=spent * 60, reason="launch", instance=f"i-{n}")
        store.jobs.end_placement(job, T0 + timedelta(minutes=1))
        store.jobs.transition(job, "succeeded", at=T0 + timedelta(minutes=1))
    store.dispose()
    return str(db), tmp_path / "instances"


@pytest.fixture(scope="module")
def dashboard_of(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Server]]:
    """The dashboard of a spread's store, one at a time: a spread's two widths (its tests
    run one after the other) look at one dashboard process, started for the first."""
    held: dict[str, Server] = {}

    def of(spread: str) -> Server:
        if spread not in held:
            for server in held.values():
                server.stop()
            held.clear()
            held[spread] = Server(*spenders(tmp_path_factory.mktemp("spread"), SPREADS[spread]))
        return held[spread]

    yield of
    for server in held.values():
        server.stop()


@pytest.mark.parametrize("width", ["desktop", "phone"])
@pytest.mark.parametrize("spread", list(SPREADS))
def test_a_logarithmic_axis_labels_its_whole_range(dashboard_of, browser, spread,  # noqa: F811
                                                    width) -> None:
    server = dashboard_of(spread)
    try:
        browser.open(server.url, *WIDTHS[width])
        browser.wait_for("document.querySelectorAll('canvas[data-drawn]').length >= 1")
        kind, ticks, values, size, heights = browser.js(AXIS)
        assert kind == "logarithmic", spread
        labelled = sorted(v for v, _, _ in ticks)
        assert len(labelled) >= 2, ticks
        assert labelled[-1] >= max(values) * (1 - 1e-9), (ticks, max(values))
        assert labelled[0] < min(values) * (1 - 1e-9), (ticks, min(values))
        assert min(heights) >= 3, (heights, ticks)  # every bar shows
        assert [label for _, label, _ in ticks] == [given_tick(v) for v, _, _ in ticks]
        pixels = sorted(y for _, _, y in ticks)
        gaps = [b - a for a, b in zip(pixels, pixels[1:], strict=False)]
        assert min(gaps) >= 1.5 * size, (ticks, size)  # a line of text apart and more
        assert browser.problems == []
    finally:
        browser.leave()  # before the server stops: its live stream does not try again
