"""The "Cost over time" chart gives each job a colour of its own, however many jobs."""

from __future__ import annotations

import itertools

import pytest

from costsched.report import build, html
from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, at, job, observe, place


def _colours(store: PriceStore, jobs: int, monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    observe(store, EAST, [(-10, 1.0)])
    for n in range(jobs):
        job_id = job(store, f"job-{n}", {"V100": 1.0})
        place(store, job_id, EAST, n * 0.1, "launch", f"i-{n}")
        store.jobs.end_placement(job_id, at(n * 0.1 + 1))
    drawn = []
    monkeypatch.setattr(html, "_png", lambda fig: drawn.append(fig) or "")
    html._over_time(build(store, now=at(30)))
    [ax] = drawn[0].axes
    return [tuple(bars.patches[0].get_facecolor()) for bars in ax.containers]


@pytest.mark.parametrize("jobs", [11, 40])
def test_every_job_has_its_own_colour(store: PriceStore, monkeypatch: pytest.MonkeyPatch,
                                      jobs: int) -> None:
    """Jobs 1 and 11 never share a swatch (matplotlib's ten colours cycle), and any two
    jobs' colours stand apart."""
    colours = _colours(store, jobs, monkeypatch)
    assert len(colours) == jobs
    assert len(set(colours)) == jobs
    apart = min(max(abs(a - b) for a, b in zip(one[:3], two[:3], strict=True))
                for one, two in itertools.combinations(colours, 2))
    assert apart > 0.04
