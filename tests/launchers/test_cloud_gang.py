"""A cloud gang's state from its nodes' (`launchers.cloud_gang`), with the clock given."""

from __future__ import annotations

from launchers import cloud_gang
from launchers.gang import NodeState


def nodes(*states: str) -> list[NodeState]:
    return [NodeState(rank, f"r/i-{rank}", state, "why" if state != "running" else "")
            for rank, state in enumerate(states)]


class Rank0:
    """Records the stop asked of rank 0 and when the loss was marked."""

    def __init__(self, fails: bool = False) -> None:
        self.stops, self.marked, self.fails = 0, [], fails

    def stop(self) -> None:
        if self.fails:
            raise RuntimeError("SSM: access denied")
        self.stops += 1

    def mark(self, tag: str) -> None:
        self.marked.append(tag)


def test_running_pending_and_a_missing_rank() -> None:
    assert cloud_gang.combine(nodes("running", "running"), 2)[:2] == (
        "running", "2 nodes running")
    assert cloud_gang.combine(nodes("running", "pending", "pending"), 3)[:2] == (
        "pending", "2 of 3 nodes starting")
    state, detail, lost = cloud_gang.combine(nodes("running"), 2)
    assert (state, lost.rank) == ("terminated", 1) and detail == "node 1 terminated: no instance"


def test_a_lost_node_stops_rank_0_once_then_ends_the_gang_after_the_grace() -> None:
    rank0 = Rank0()
    gang = nodes("running", "preempted")
    state, detail = cloud_gang.settle(gang, 2, "", rank0.stop, rank0.mark, now=1000.0)
    assert state == "running" and rank0.stops == 1 and rank0.marked == ["1000.000"]
    assert detail == "node 1 preempted: why; rank 0 checkpoints before the gang ends"
    grace = cloud_gang.STOP_GRACE_SECONDS
    assert cloud_gang.settle(gang, 2, "1000.000", rank0.stop, rank0.mark,
                             now=1000.0 + grace - 1)[0] == "running"
    state, detail = cloud_gang.settle(gang, 2, "1000.000", rank0.stop, rank0.mark,
                                      now=1000.0 + grace)
    assert (state, detail) == ("preempted", "node 1 preempted: why; the gang was ended")
    assert rank0.stops == 1  # asked once


def test_an_unreadable_lost_mark_asks_rank_0_again() -> None:
    for mark in ("", "soon", "nan", "inf"):
        rank0 = Rank0()
        state, _ = cloud_gang.settle(nodes("running", "preempted"), 2, mark, rank0.stop,
                                     rank0.mark, now=7.0)
        assert (state, rank0.stops, rank0.marked) == ("running", 1, ["7.000"]), mark


def test_rank_0_lost_or_unreachable_ends_the_gang_at_once() -> None:
    rank0 = Rank0()
    assert cloud_gang.settle(nodes("preempted", "running"), 2, "", rank0.stop,
                             rank0.mark, now=5.0)[0] == "preempted"
    assert rank0.stops == 0
    unreachable = Rank0(fails=True)
    state, detail = cloud_gang.settle(nodes("running", "terminated"), 2, "",
                                      unreachable.stop, unreachable.mark, now=5.0)
    assert state == "terminated" and "could not be asked to checkpoint" in detail
    assert unreachable.marked == []


def test_gang_names_round_trip_and_others_are_not_gangs() -> None:
    name = cloud_gang.name(7, 2, "j7-m1-0")
    assert cloud_gang.parse(name) == (7, 2, cloud_gang.digest(7, "j7-m1-0"))
    for other in ("i-0123456789abcdef0", "gang-7-2-xyz", "costsched-7-0123456789ab"):
        assert cloud_gang.parse(other) is None
