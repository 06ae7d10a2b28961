"""`throughput show --measured` says why a run that reported its steps taught nothing: its
job's file names no model, the name a measured speed is kept under; and what gives it."""

from __future__ import annotations

import json
from datetime import timedelta

from costsched.service import throughputs
from costsched.store import PriceStore
from tests.costsched.service.test_throughputs import AT, T4, market, run_on_t4  # noqa: F401

WHY = ("no speed learned from job {ids}: {whose} job file names no `model:`, the name a "
       "measured speed is kept under; add `model: NAME` (under `costsched:` in a SkyPilot "
       "task) and the next run is learned")


def test_runs_of_jobs_without_a_model_say_why_nothing_was_learned(
        market: PriceStore, cli) -> None:  # noqa: ANN001, F811
    job = run_on_t4(market, 0.5, AT - timedelta(days=1), name="bigram",
                    spec={"name": "bigram", "steps": 10_000})
    assert throughputs.learn(market, AT) == 0
    said = WHY.format(ids=f"{job} (bigram)", whose="its")
    assert throughputs.unlearned(market) == said
    shown = cli("throughput", "show", "--measured")
    assert shown.exit_code == 0, shown.output
    assert said in " ".join(shown.stdout.split())
    doc = json.loads(cli("throughput", "show", "--measured", "--json").stdout)
    assert doc["runs"] == [] and doc["not_learned"] == said


def test_nothing_is_said_when_every_run_was_learned(market: PriceStore) -> None:  # noqa: F811
    run_on_t4(market, 0.5, AT - timedelta(days=1))
    assert throughputs.learn(market, AT) == 1
    assert throughputs.unlearned(market) == ""


def test_several_jobs_are_named_a_few_at_most(market: PriceStore) -> None:  # noqa: F811
    ids = [run_on_t4(market, 0.5, AT - timedelta(days=1), name=f"j{i}",
                     spec={"name": f"j{i}", "steps": 10_000}) for i in range(5)]
    said = throughputs.unlearned(market)
    assert said.startswith(f"no speed learned from jobs {ids[0]} (j0), {ids[1]} (j1), "
                           f"{ids[2]} (j2) and 2 more: their job files name no `model:`")


def test_a_run_too_short_to_measure_is_said_so_not_to_lack_a_model(
        market: PriceStore) -> None:  # noqa: F811
    """A run whose step reports span under a minute is not named as one a model would
    have taught: it is said to be too short to measure (`report` may show its pace)."""
    start = AT - timedelta(days=1)
    job = market.jobs.create("brief", {"spec": {"name": "brief", "steps": 10},
                                       "source": "test"}, 10, at=start)
    market.jobs.place(job, T4, gpu_model="T4", gpu_count=1,
                      at=start, usd_per_hour=0.30, reason="launch", instance="i-9")
    market.jobs.record_progress(job, 1, at=start + timedelta(seconds=10))
    market.jobs.record_progress(job, 5, at=start + timedelta(seconds=40))
    market.jobs.end_placement(job, start + timedelta(seconds=50))
    short = (f"no speed learned from job {job} (brief): its step readings (taken at each "
             "watch) on any one instance span less than a minute, too short to learn a speed "
             "for the throughput table from; `report` shows the pace of shorter runs")
    assert throughputs.unlearned(market) == short
    named = run_on_t4(market, 0.5, start, name="bigram", spec={"name": "bigram", "steps": 9})
    assert throughputs.unlearned(market) == "\n".join(
        [WHY.format(ids=f"{named} (bigram)", whose="its"), short])


def test_a_run_read_at_each_watch_is_learned_from_its_readings(
        market: PriceStore) -> None:  # noqa: F811
    """The watch keeps a running job's step on its placement (`record_step`: readings, no
    event): a run read for two minutes is measured from them, with a model; without one,
    it is said to lack the model, never to be too short."""
    start = AT - timedelta(days=1)

    def run(name: str, spec: dict) -> int:
        job = market.jobs.create(name, {"spec": spec, "source": "test"}, 600, at=start)
        market.jobs.place(job, T4, gpu_model="T4", gpu_count=1, at=start, usd_per_hour=0.30,
                          reason="launch", instance=f"i-{name}")
        for seconds, step in ((30, 10), (90, 130), (150, 250)):  # 2 steps/s, read each watch
            market.jobs.record_step(job, step, at=start + timedelta(seconds=seconds))
        market.jobs.end_placement(job, start + timedelta(seconds=160))
        return job

    run("named", {"name": "named", "model": "bigram-lm", "steps": 600})
    nameless = run("nameless", {"name": "nameless", "steps": 600})
    assert throughputs.learn(market, AT) == 1
    [row] = market.measured_throughputs.rows("bigram-lm").itertuples()
    assert (row.steps, row.seconds, row.steps_per_second) == (240, 120, 2.0)
    assert throughputs.unlearned(market) == WHY.format(ids=f"{nameless} (nameless)",
                                                       whose="its")
