"""The pass that replaces a gang's lost node in place says in its NODE_RECOVERY line the
step the gang reported last before the loss and when it wrote it: where its stall began,
which its measured speed leaves out from there (`gang_stalls`), not from the pass. Real
local-launcher agents of a two-node job, one node preempted."""

from __future__ import annotations

from datetime import datetime, timezone

from costsched.gang_stalls import LAST_STEP, stalls
from costsched.model import NODE_RECOVERY
from costsched.service import jobs as service
from tests.costsched.service.test_gang import preempted_gang, wait_for, world  # noqa: F401


def test_the_repair_says_where_the_stall_began(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, first, _, counter = preempted_gang(store, launcher, tmp)
    counter.stopped = True
    # Rank 0 waits for the lost node: its step stands.
    before = wait_for(lambda: (s := launcher.status(first)).step and s.step_at and s)
    assert before.lost_nodes == (1,)

    def repaired() -> list:
        service.reconcile(store, launcher)
        return store.jobs.event_rows([job], kinds=[NODE_RECOVERY])

    [event] = wait_for(repaired)
    said = str(event.detail)
    found = LAST_STEP.search(said)
    assert found is not None and said.endswith(found.group(0)), said
    step = int(said.split("; it last reported step ")[1].split(" at ")[0].replace(",", ""))
    assert step >= before.step, said  # (rank 0 may write a step or two before it waits)
    began = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
    assert before.step_at.replace(microsecond=0) <= began <= event.at, said
    placement = store.jobs.placement_rows([job])[0]
    [(start, _)] = stalls([event], [placement])[placement.id]
    assert start == began.timestamp()  # the stall begins there, before the pass saw it
