"""What the local launcher's instances meet stands in for a cloud, on this machine: a
simulated preemption or capacity error is kept (source 'local') for the job's story and the
local launches' ranking, but never counted as the cloud's. The preemption rates plans and
decisions use, the capacity the cloud launches rank by and the deadline policies' view of a
zone are those of the clouds' own instances. Real agents, a real SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from costsched.model import Offering
from costsched.service import jobs as service
from costsched.service.jobs.decider import JobNow, place
from costsched.service.jobs.market import Market
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import ZONES, world, write_spec  # noqa: F401

LATER = timedelta(seconds=60)
FULL = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)


class StandIn(LocalLauncher):
    """The local launcher under another backend's name: as a cloud's own instances count."""

    name = "stand-in"


@pytest.mark.parametrize(("backend", "counted"), [(LocalLauncher, False), (StandIn, True)])
def test_a_local_preemption_is_kept_but_never_counted_as_the_clouds(
        world, backend: type[LocalLauncher], counted: bool) -> None:  # noqa: F811
    store, _, tmp = world
    launcher = backend(tmp / "instances", grace_seconds=5)
    [job] = service.launch(store, write_spec(tmp, run="exec sleep 600"), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp / "checkpoints"))
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    launcher.preempt(instance)
    at = launcher.status(instance).lost_at + LATER
    service.reconcile(store, launcher, at=at)
    assert len(store.jobs.placements(job.id)) == 2  # recovered

    rates = service.measured_rates(store, at + LATER)
    if counted:
        assert rates is not None and rates["preemptions"].sum() == 1
    else:  # neither its preemption nor its spot hours
        assert rates is None or rates.empty, rates
    seen = store.availability.since()
    preempted = seen[seen["event"] == "preempted"]
    assert list(preempted["source"]) == ["" if counted else "local"]  # kept, either way
    assert set(seen["source"]) == {"" if counted else "local"}  # its launches' too
    for found in launcher.instances():
        launcher.terminate(found.id)


def test_a_local_no_capacity_ranks_only_the_local_launches(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    from costsched.jobspec import resolve
    from costsched.taskfile import load
    from costsched.throughput import ThroughputTable

    now = datetime.now(timezone.utc)
    resolved = resolve(load(write_spec(tmp))[0], ThroughputTable(), now)

    def placed(by: LocalLauncher) -> list[str]:
        job = JobNow(resolved, now, "dynamic-aware", "us-east-1", None, resolved.job.steps)
        return [c["key"][2] for c in place(store, job, by, now)]

    store.availability.record(FULL, "capacity", at=now - timedelta(minutes=5),
                              source="local")
    assert placed(launcher) == ["us-east-1b", "us-east-1c", "us-east-1a"]  # its own: last
    assert placed(StandIn(tmp / "instances")) == list(ZONES)  # a cloud's: cheapest first
    market = Market(store, now)
    assert market.full == set() and market.full_for(here=True) == {(*FULL.key[:5], "linux")}


def test_an_unknown_source_is_refused_in_one_line(world) -> None:  # noqa: F811
    store, _, _ = world
    from costsched.model import InvalidInput

    with pytest.raises(InvalidInput, match=r"availability source 'sim': expected ''"):
        store.availability.record(FULL, "capacity", at=datetime.now(timezone.utc),
                                  source="sim")
