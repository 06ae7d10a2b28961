"""A gang's node lost and replaced where it ran is a recovery like any other: counted in
`status` (text and JSON; its line stands while the gang waits for the new node) and the
report's preemptions, said by the reconcile that saw it
(the daemon's log, the recovery notification) and kept in the job's log, once. On the
Compute Engine fakes (in process): a 2-node gang whose node 1 Compute Engine takes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

pytest.importorskip("google.cloud.compute_v1")

from costsched.cli.status_lines import node_notices  # noqa: E402
from costsched.model import NODE_RECOVERY  # noqa: E402
from costsched.report import build  # noqa: E402
from costsched.service import jobs as service  # noqa: E402
from costsched.service.views import status_document  # noqa: E402
from launchers import cloud_gang  # noqa: E402
from tests.costsched.service.test_flex_start_charged import (  # noqa: E402
    AT,
    ZONE,
    H,
    launched,
    run_nodes,
)

M = timedelta(minutes=1)


def test_a_node_replaced_in_place_is_counted_said_and_logged_once(tmp_path: Path) -> None:
    store, fake, launcher, job = launched(tmp_path)
    run_nodes(fake, AT + H, AT + H)
    service.reconcile(store, launcher, at=AT + H + 5 * M)
    handle = str(store.jobs.placements(job)["instance"].iloc[-1])
    rank1 = launcher.nodes(handle)[1].id.split("/")[1]

    del fake.store[(ZONE, rank1)]  # Compute Engine takes node 1
    said = service.reconcile(store, launcher, at=AT + 2 * H)
    [line] = [e for e in said if e.job_id == job and e.kind == "recovery"]
    assert "node 1 was lost: replaced in" in line and line.notify == "recovery"

    fake.store[(ZONE, rank1)].status = "PENDING"
    assert not [e for e in service.reconcile(store, launcher, at=AT + 2 * H + 5 * M)
                if e.notify]  # waiting for the replacement: said once, counted once
    (waiting,) = service.status(store, launcher, job, at=AT + 2 * H + 6 * M,
                                reconcile_first=False)
    assert waiting.nodes_out == (1,)  # `status` says what happened to it meanwhile
    [notice] = node_notices(waiting)
    assert "node 1 was lost: replaced in" in notice
    run_nodes(fake, AT + H, AT + 2.5 * H)
    uri = store.jobs.get(job).checkpoint_location
    digest = cloud_gang.digest(job, launcher.status(handle).attempt)
    cloud_gang.StoreGangFile(uri, digest, 0).left(1, "paused")
    cloud_gang.StoreGangFile(uri, digest, 1).ready()
    service.reconcile(store, launcher, at=AT + 2.5 * H + 5 * M)
    assert [n.state for n in launcher.nodes(handle)] == ["running", "running"]

    log = store.jobs.events(job)
    kept = log[log["kind"] == NODE_RECOVERY]["detail"].tolist()
    assert len(kept) == 1 and f"instance {handle}: node 1 was lost" in kept[0]
    (shown,) = service.status(store, launcher, job, at=AT + 3 * H, reconcile_first=False)
    assert shown.recoveries == 1
    # Whole again: said as a recovery, at the time it came, and counted.
    came = kept[0].replace("the gang resumes once the new node is set up",
                           "the gang resumed once the new node was set up")
    assert shown.nodes_out == () and node_notices(shown) == [
        f"recovered at {shown.node_recoveries[0].at:%Y-%m-%d %H:%M} UTC: {came}"]
    [doc] = status_document([shown])
    assert doc["recoveries"] == 1 and doc["node_recoveries"][0]["detail"] == kept[0]
    assert [m["kind"] for m in doc["moves"]] == ["launch"]  # repaired in place: no move
    [estimate] = build(store, now=AT + 3 * H).estimates.to_dict("records")
    assert estimate["preemptions"] == 1
    store.dispose()
