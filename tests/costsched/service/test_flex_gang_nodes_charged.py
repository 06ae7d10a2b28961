"""Each node of a flex-start gang is charged for the time it ran, as Compute Engine bills
each VM: a node replaced inside a running gang is charged nothing while its replacement
waits for capacity, then from when the replacement runs (its lastStartTimestamp); a node
that ran while its peer never got capacity is charged its own run when the gang is given
up. `status`, the budgets and the report agree, at the stored price."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

compute_v1 = pytest.importorskip("google.cloud.compute_v1")

from costsched.report import build  # noqa: E402
from costsched.service import jobs as service  # noqa: E402
from costsched.service.jobs.halt import stop_job  # noqa: E402
from launchers import cloud_gang  # noqa: E402
from tests.costsched.service.test_flex_start_charged import (  # noqa: E402
    AT,
    FLEX_USD,
    ZONE,
    H,
    cost_now,
    launched,
    run_nodes,
    spent,
)

M = timedelta(minutes=1)


def test_a_replaced_node_is_charged_from_when_its_replacement_runs(tmp_path: Path) -> None:
    store, fake, launcher, job = launched(tmp_path)
    run_nodes(fake, AT + H, AT + H)
    service.reconcile(store, launcher, at=AT + H + 5 * M)
    handle = str(store.jobs.placements(job)["instance"].iloc[-1])
    rank1 = launcher.nodes(handle)[1].id.split("/")[1]

    # Two hours in, Compute Engine takes node 1: it is replaced where it ran, as flex-start
    # again, and the replacement waits 90 minutes for capacity.
    del fake.store[(ZONE, rank1)]
    service.reconcile(store, launcher, at=AT + 3 * H)
    assert len(fake.inserted) == 3  # the replacement asked for
    fake.store[(ZONE, rank1)].status = "PENDING"
    service.reconcile(store, launcher, at=AT + 4 * H)
    # While it waits: node 0 is charged, node 1 not since it was seen lost.
    assert cost_now(store, launcher, job, AT + 4 * H) == pytest.approx(FLEX_USD * (3 + 2))
    assert spent(store, AT + 4 * H) == pytest.approx(FLEX_USD * 5)

    run_nodes(fake, AT + H, AT + 4.5 * H)  # the replacement runs from 4:30 in
    uri = store.jobs.get(job).checkpoint_location
    digest = cloud_gang.digest(job, launcher.status(handle).attempt)
    cloud_gang.StoreGangFile(uri, digest, 0).left(1, "paused")
    cloud_gang.StoreGangFile(uri, digest, 1).ready()
    service.reconcile(store, launcher, at=AT + 4.5 * H + 10 * M)
    assert [n.state for n in launcher.nodes(handle)] == ["running", "running"]
    assert "placement 1: node 1 runs: charged from " + (AT + 4.5 * H).isoformat().replace(
        "+00:00", "Z") in store.jobs.events(job)["detail"].tolist()

    now = AT + 6 * H
    # Node 0: 1:00 to 6:00; node 1: 1:00 to 3:00, its replacement 4:30 to 6:00 (8.5 h).
    # Charged both nodes throughout before: 10 h, $470.
    expected = FLEX_USD * (5.0 + 2.0 + 1.5)
    assert expected == pytest.approx(399.5)
    assert cost_now(store, launcher, job, now) == pytest.approx(expected)
    assert spent(store, now) == pytest.approx(expected)
    report = build(store, now=now)
    assert report.jobs["usd"].sum() == pytest.approx(expected)
    assert report.jobs["billed_hours"].sum() == pytest.approx(5.0)  # the placement's own hours
    store.dispose()


@pytest.mark.parametrize("watched", [True, False], ids=["seen-running", "seen-at-stop"])
def test_a_node_that_ran_while_its_peer_never_got_capacity_is_charged_its_run(
        tmp_path: Path, watched: bool) -> None:
    store, fake, launcher, job = launched(tmp_path)
    node0 = min(fake.store.values(), key=lambda i: i.name)
    node0_started = AT + H  # node 0 only: node 1 still waits for capacity
    node0.status = "RUNNING"
    node0.last_start_timestamp = node0_started.isoformat(timespec="milliseconds")
    if watched:  # a watch pass sees node 0 run (else the stop is the first to look)
        service.reconcile(store, launcher, at=AT + H + 5 * M)
        assert node0.status == "RUNNING" and store.jobs.get(job).state == "launching"
        placed = store.jobs.placements(job)
        assert placed["waiting"].tolist() == [False]  # charged: node 0 runs
        assert cost_now(store, launcher, job, AT + H + 30 * M) == pytest.approx(FLEX_USD / 2)

    # 40 minutes after node 0 began, node 1 never got capacity: the gang is given up.
    stop_job(store, launcher, job, node0_started + 40 * M)
    placed = store.jobs.placements(job)
    assert placed["end_at"].tolist() == [node0_started + 40 * M]
    assert fake.store == {}  # both nodes deleted
    expected = FLEX_USD * 40 / 60  # node 0's 40 minutes; $0 before
    assert expected == pytest.approx(31.333333)
    later = AT + 5 * H
    assert cost_now(store, launcher, job, later) == pytest.approx(expected)
    assert spent(store, later) == pytest.approx(expected)
    assert build(store, now=later).jobs["usd"].sum() == pytest.approx(expected)
    store.dispose()
