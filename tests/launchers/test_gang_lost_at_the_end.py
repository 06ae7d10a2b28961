"""A gang whose node is lost and not replaced before rank 0's job exits 0 (rank 0 finished
before costsched looked): the node's job did not run to the end, so the gang fails, the
lost node said, however often it is read. And a node agent that ends is reaped at once by
the process that started it, whoever ends it. Real agents on the local launcher."""

from __future__ import annotations

import signal
import time

from launchers import gang
from launchers.local import LocalLauncher
from launchers.procfs import proc_stat
from tests.launchers.test_gang import launcher, node_pid, spec, wait_state  # noqa: F401

# Rank 0 finishes once told to (the file GO); the other nodes run on.
FINISH_ON_GO = ('if [ "$SKYPILOT_NODE_RANK" = 0 ]; then '
                'while [ ! -e "{go}" ]; do sleep 0.05; done; echo done; '
                'else exec sleep 60; fi')


def rank0_ended(made: LocalLauncher, instance_id: str, seconds: float = 60.0) -> dict:
    """Rank 0's status.json once it says its job ended, read from its file, so that the
    launcher never sees the gang while rank 0 runs."""
    path = made.base_dir.resolve() / instance_id / "status.json"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = gang.read_json(path)
        if status.get("state", "running") != "running":
            return status
        time.sleep(0.05)
    raise AssertionError(f"{instance_id}: rank 0 still running")


def test_a_node_lost_before_rank_0_exits_0_fails_the_gang(tmp_path, launcher):  # noqa: F811
    go = tmp_path / "go"
    instance = launcher.launch(spec(tmp_path, FINISH_ON_GO.format(go=go)))
    launcher.preempt_node(instance.id, 1)  # as `python -m launchers.local preempt --node 1`
    go.touch()
    assert rank0_ended(launcher, instance.id)["state"] == "succeeded"
    seen = launcher.status(instance.id)
    assert seen.state == "failed" and seen.lost_nodes == (1,)
    assert seen.exit_code is None  # rank 0's exit 0 is not the gang's
    assert seen.detail.startswith("node 1 was preempted and not replaced before rank 0's "
                                  "job exited 0: node 1's job did not run to its end")
    again = launcher.statuses([instance.id])[instance.id]  # decided once: every read says it
    assert (again.state, again.lost_nodes, again.detail) == ("failed", (1,), seen.detail)


def test_a_gang_whose_nodes_ran_to_rank_0s_end_succeeds(tmp_path, launcher):  # noqa: F811
    go = tmp_path / "go"
    instance = launcher.launch(spec(tmp_path, FINISH_ON_GO.format(go=go)))
    wait_state(launcher, instance.id, ("running",))
    go.touch()
    assert rank0_ended(launcher, instance.id)["state"] == "succeeded"
    seen = launcher.status(instance.id)
    assert (seen.state, seen.lost_nodes, seen.exit_code) == ("succeeded", (), 0)
    # node 1, still running at the end, was ended: later reads do not take it for lost
    assert launcher.status(instance.id).state == "succeeded"


def test_a_node_ended_from_outside_is_reaped_by_the_process_that_started_it(
        tmp_path, launcher):  # noqa: F811
    instance = launcher.launch(spec(tmp_path, "sleep 60"))
    wait_state(launcher, instance.id, ("running",))
    pid = node_pid(launcher, instance.id, 1)
    gang.signal_group(pid, signal.SIGKILL)  # another process preempts it: no launcher call
    deadline = time.monotonic() + 30
    while (stat := proc_stat(pid)) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stat is None, f"node 1's agent {pid} left as {stat.state}"  # not a zombie
