"""`logs --all` of a gang: every node's output of every round (a node lost and replaced:
its lost round's and its replacement's), each under a line naming its instance and node;
a job of one node as before."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


class Logs:
    """A launcher that keeps a gang's nodes' logs apart (as the local one does)."""

    name = "local"

    def __init__(self, nodes: dict[str, list[tuple[str, str]]]) -> None:
        self.nodes = nodes

    def logs(self, instance: str, tail: int = 200) -> str:
        return self.nodes[instance][0][1]  # rank 0's

    def node_logs(self, instance: str, tail: int = 200) -> list[tuple[str, str]]:
        return self.nodes[instance]


def _placed(store: PriceStore, *instances: str) -> int:
    job = store.jobs.create("gang", {"spec": {"name": "gang", "num_nodes": 2}}, 10, at=T0)
    for n, instance in enumerate(instances):
        at = T0 + timedelta(hours=n)
        store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at,
                         usd_per_hour=1.0, reason="launch" if n == 0 else "start",
                         instance=instance)
        store.jobs.end_placement(job, at + timedelta(minutes=30))
    return job


def test_every_node_of_every_round_is_shown_under_its_instance(store: PriceStore) -> None:
    job = _placed(store, "1-a", "1-b")
    launcher = Logs({
        "1-a": [("node 0", "round=1 rank=0\nround=2 rank=0\n"),
                ("node 1, lost in round 1", "round=1 rank=1\n"),
                ("node 1, replaced, from round 2", "round=2 rank=1")],
        "1-b": [("node 0", "round=1 rank=0\n"), ("node 1", "round=1 rank=1\n")]})
    assert service.every_log(store, launcher, job) == (
        "--- instance 1-a, node 0 (launched 2026-03-01 00:00Z, stopped 2026-03-01 00:30Z)\n"
        "round=1 rank=0\nround=2 rank=0\n"
        "--- instance 1-a, node 1, lost in round 1\nround=1 rank=1\n"
        "--- instance 1-a, node 1, replaced, from round 2\nround=2 rank=1\n"
        "--- instance 1-b, node 0 (started again 2026-03-01 01:00Z, ended "
        "2026-03-01 01:30Z)\nround=1 rank=0\n"
        "--- instance 1-b, node 1\nround=1 rank=1\n")


def test_one_nodes_output_is_under_its_instance_alone(store: PriceStore) -> None:
    job = _placed(store, "1-a")
    launcher = Logs({"1-a": [("node 0", "step 1\n")]})
    assert service.every_log(store, launcher, job) == (
        "--- instance 1-a (launched 2026-03-01 00:00Z, ended 2026-03-01 00:30Z)\nstep 1\n")


class PerNode:
    """A cloud launcher of gangs: one log a node (its console output), rounds not kept
    apart."""

    name = "aws"

    def logs(self, instance: str, tail: int = 200, node: int = 0) -> str:
        return f"console of node {node}\n"


def test_a_launcher_that_keeps_a_log_a_node_shows_each_rank(store: PriceStore) -> None:
    job = _placed(store, "1-a")
    assert service.every_log(store, PerNode(), job) == (
        "--- instance 1-a, node 0 (launched 2026-03-01 00:00Z, ended 2026-03-01 00:30Z)\n"
        "console of node 0\n"
        "--- instance 1-a, node 1\nconsole of node 1\n")
