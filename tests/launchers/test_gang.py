"""A gang on the local launcher: N real agents, one per node folder, that live and end
as one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from costsched.model import InvalidInput, Offering
from launchers import gang
from launchers.base import LaunchSpec
from launchers.local import INSTANCE, LocalLauncher
from launchers.procfs import group_members

NODE_INFO = ('echo "rank=$SKYPILOT_NODE_RANK nodes=$SKYPILOT_NUM_NODES '
             'gpus=$SKYPILOT_NUM_GPUS_PER_NODE own=$COSTSCHED_NODE_RANK"; '
             'printf "ips=%s|\\n" "$SKYPILOT_NODE_IPS" | tr "\\n" ","; echo')


def offering() -> Offering:
    return Offering(cloud="aws", region="us-east-1", zone="us-east-1a",
                    instance_type="p3.2xlarge", market="spot", gpu_model="V100", gpu_count=1)


def spec(tmp_path: Path, command: str, nodes: int = 2, attempt: str = "a1",
         setup: str = "") -> LaunchSpec:
    return LaunchSpec(job_id=7, job_name="gang", command=command, offering=offering(),
                      checkpoint_uri=str(tmp_path / "ckpt"), attempt=attempt, setup=setup,
                      task={"num_nodes": nodes})


def wait_state(launcher: LocalLauncher, instance_id: str, states: tuple[str, ...],
               seconds: float = 60.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = launcher.status(instance_id).state
        if state in states:
            return state
        time.sleep(0.1)
    raise AssertionError(f"{instance_id}: still {launcher.status(instance_id).state}")


def node_pids(launcher: LocalLauncher, instance_id: str) -> list[int]:
    folder = launcher.base_dir.resolve() / instance_id
    records = [gang.read_json(folder / INSTANCE)]
    records += [gang.read_json(gang.node_folder(folder, r) / gang.NODE)
                for r in gang.ranks(folder)]
    return [r["pid"] for r in records if r.get("pid")]


def alive(pids: list[int]) -> list[int]:
    return [p for p in pids if group_members(p)]


@pytest.fixture()
def launcher(tmp_path: Path):  # noqa: ANN201
    made = LocalLauncher(tmp_path / "instances", grace_seconds=3, poll_seconds=0.2,
                         pass_env=())
    yield made
    for instance in made.instances():
        made.terminate(instance.id)


def test_two_nodes_see_their_ranks_the_gang_size_and_both_addresses(tmp_path, launcher):
    # rank 0 ends the job: it waits for node 1 to have said its piece
    command = (f'{NODE_INFO}; touch {tmp_path}/said-$SKYPILOT_NODE_RANK; '
               f'for i in $(seq 300); do [ -e {tmp_path}/said-1 ] && break; sleep 0.1; done')
    instance = launcher.launch(spec(tmp_path, command, setup="echo setup-ran"))
    assert wait_state(launcher, instance.id, ("succeeded", "failed")) == "succeeded"
    for rank in (0, 1):
        log = launcher.logs(instance.id, node=rank)
        assert "setup-ran" in log  # setup runs on every node
        assert f"rank={rank} nodes=2 gpus=1 own={rank}" in log
        assert "ips=127.0.0.1,127.0.0.1|" in log  # one address a line, as SkyPilot gives
    folder = launcher.base_dir.resolve() / instance.id
    assert (folder / gang.NODES / "1" / "code").is_dir()  # a node folder of its own
    with pytest.raises(InvalidInput, match="no node 2"):
        launcher.logs(instance.id, node=2)


def test_a_job_of_one_node_gets_no_node_folders_and_is_rank_0_of_1(tmp_path, launcher):
    instance = launcher.launch(spec(tmp_path, NODE_INFO, nodes=1))
    assert wait_state(launcher, instance.id, ("succeeded", "failed")) == "succeeded"
    assert "rank=0 nodes=1 gpus=1 own=0" in launcher.logs(instance.id)  # as SkyPilot says
    assert gang.ranks(launcher.base_dir.resolve() / instance.id) == []


def test_only_rank_0_publishes_checkpoints(tmp_path, launcher):
    command = 'echo "$SKYPILOT_NODE_RANK" > "$CHECKPOINT_DIR/from-$SKYPILOT_NODE_RANK"'
    instance = launcher.launch(spec(tmp_path, command))
    assert wait_state(launcher, instance.id, ("succeeded", "failed")) == "succeeded"
    from launchers.checkpoints import open_store

    store = open_store(str(tmp_path / "ckpt"))
    assert {c.name for c in store.list()} == {"from-0"}


ROUNDS = ('echo "round=$COSTSCHED_GANG_ROUND rank=$SKYPILOT_NODE_RANK"; '
          'ls "$CHECKPOINT_DIR"; '
          'if [ "$SKYPILOT_NODE_RANK" = 0 ]; then echo "$COSTSCHED_GANG_ROUND" > '
          '"$CHECKPOINT_DIR/round-$COSTSCHED_GANG_ROUND"; fi; exec sleep 60')


def node_pid(launcher: LocalLauncher, instance_id: str, rank: int) -> int:
    folder = launcher.base_dir.resolve() / instance_id
    name = INSTANCE if rank == 0 else gang.NODE
    return gang.read_json(gang.node_folder(folder, rank) / name)["pid"]


def test_losing_a_node_leaves_the_others_running_until_it_is_replaced(tmp_path, launcher):
    instance = launcher.launch(spec(tmp_path, "sleep 60"))
    assert wait_state(launcher, instance.id, ("running",)) == "running"
    pids = node_pids(launcher, instance.id)
    assert len(pids) == 2 and alive(pids) == pids
    launcher.preempt_node(instance.id, 1)
    seen = launcher.status(instance.id)
    assert seen.state == "running" and seen.lost_nodes == (1,)
    assert seen.detail.startswith("node 1 was preempted: its replacement is awaited")
    assert alive(pids) == pids[:1]  # rank 0 is kept, waiting
    assert launcher.status(instance.id).lost_nodes == (1,)  # a read changes nothing


def test_a_lost_node_is_replaced_where_it_was_and_the_survivor_kept(tmp_path, launcher):
    job = spec(tmp_path, ROUNDS)
    instance = launcher.launch(job)
    wait_state(launcher, instance.id, ("running",))
    folder = launcher.base_dir.resolve() / instance.id
    for rank in (0, 1):
        wait_for_log(launcher, instance.id, rank, f"round=1 rank={rank}")
    rank0, rank1 = node_pid(launcher, instance.id, 0), node_pid(launcher, instance.id, 1)
    launcher.preempt_node(instance.id, 1)
    said = repaired(launcher, instance.id, job)
    assert said[0].startswith("node 1 was preempted: replaced in us-east-1a, the other "
                              "nodes kept")
    assert "(round 2)" in said[-1] and all("(round 2)" not in line for line in said[:-1])
    assert node_pid(launcher, instance.id, 0) == rank0  # the same agent: the node is kept
    assert node_pid(launcher, instance.id, 1) != rank1  # a new node in the lost one's place
    assert alive([rank0]) == [rank0] and alive([rank1]) == []
    assert (folder / gang.NODES / "1.lost-1" / "job.log").is_file()  # the old node's log
    for rank in (0, 1):  # a new rendezvous: every node runs round 2
        wait_for_log(launcher, instance.id, rank, f"round=2 rank={rank}")
    # rank 0 checkpointed round 1, published it as it paused; the new node 1 restored it
    wait_for_log(launcher, instance.id, 1, "round-1")
    seen = launcher.status(instance.id)
    assert seen.state == "running" and seen.lost_nodes == ()
    # Every node's output of every round: the lost node's round 1, then its replacement's.
    logs = launcher.node_logs(instance.id)
    assert [said for said, _ in logs] == ["node 0", "node 1, lost in round 1",
                                          "node 1, replaced, from round 2"]
    assert "round=1 rank=1" in logs[1][1] and "round=2 rank=1" not in logs[1][1]
    assert "round=2 rank=1" in logs[2][1] and "round=1 rank=0" in logs[0][1]
    assert launcher.repair_nodes(instance.id, job) == ""  # nothing more to repair
    assert len(alive(node_pids(launcher, instance.id))) == 2


def test_a_lost_node_without_capacity_where_it_was_ends_the_gang(tmp_path, launcher):
    from launchers.base import CapacityError

    job = spec(tmp_path, "sleep 60")
    instance = launcher.launch(job)
    wait_state(launcher, instance.id, ("running",))
    pids = node_pids(launcher, instance.id)
    launcher.preempt_node(instance.id, 1, capacity=False)
    with pytest.raises(CapacityError, match="no capacity to replace node 1"):
        launcher.repair_nodes(instance.id, job)
    seen = launcher.status(instance.id)
    assert seen.state == "preempted" and "cannot be replaced in us-east-1a" in seen.detail
    assert alive(pids) == []  # ended as a whole, to move where N nodes fit


def test_a_repair_cut_short_is_carried_on(tmp_path, launcher):
    job = spec(tmp_path, ROUNDS)
    instance = launcher.launch(job)
    wait_for_log(launcher, instance.id, 0, "round=1 rank=0")
    folder = launcher.base_dir.resolve() / instance.id
    launcher.preempt_node(instance.id, 1)
    # costsched stopped after pausing the round and starting the replacement
    gang.write_round(folder, 1, 2, paused=True)
    (folder / gang.NODES / "1").rename(folder / gang.NODES / "1.lost-1")
    gang.start_node(launcher, instance.id, folder, job, 1, 2)
    started = node_pid(launcher, instance.id, 1)
    seen = launcher.status(instance.id)
    assert seen.state == "running" and seen.lost_nodes == () and seen.replacing == (1,)
    assert "paused while node 1 is replaced" in seen.detail
    assert "(round 2)" in repaired(launcher, instance.id, job)[-1]
    assert node_pid(launcher, instance.id, 1) == started  # not replaced twice
    for rank in (0, 1):
        wait_for_log(launcher, instance.id, rank, f"round=2 rank={rank}")


def test_the_gang_waits_for_its_replacement_to_be_set_up(tmp_path, launcher):
    job = spec(tmp_path, ROUNDS, setup=f"if [ -e {tmp_path}/slow ]; then sleep 2; fi")
    instance = launcher.launch(job)
    wait_for_log(launcher, instance.id, 0, "round=1 rank=0")
    (tmp_path / "slow").touch()  # the replacement's setup takes a while
    launcher.preempt_node(instance.id, 1)
    said = launcher.repair_nodes(instance.id, job)
    assert said.endswith("the gang resumes once the new node is set up")
    folder = launcher.base_dir.resolve() / instance.id
    assert gang.read_json(folder / gang.GANG)["paused"]  # nobody runs round 2 yet
    assert launcher.status(instance.id).replacing == (1,)  # the next pass looks again
    assert "(round 2)" in repaired(launcher, instance.id, job)[-1]
    assert "costsched: setup done" in launcher.logs(instance.id, node=1)
    wait_for_log(launcher, instance.id, 1, "round=2 rank=1")


def test_a_replacement_whose_setup_fails_fails_the_gang(tmp_path, launcher):
    job = spec(tmp_path, ROUNDS, setup=f"test ! -e {tmp_path}/broken")
    instance = launcher.launch(job)
    wait_for_log(launcher, instance.id, 0, "round=1 rank=0")
    pids = node_pids(launcher, instance.id)
    (tmp_path / "broken").touch()
    launcher.preempt_node(instance.id, 1)
    said = repaired_or_ended(launcher, instance.id, job)
    assert said.startswith("node 1 failed: setup failed: exit code 1")
    seen = launcher.status(instance.id)
    assert seen.state == "failed" and seen.detail.startswith("node 1 failed: setup failed")
    assert alive(pids + node_pids(launcher, instance.id)) == []


def repaired_or_ended(launcher: LocalLauncher, instance_id: str, job: LaunchSpec) -> str:
    deadline = time.monotonic() + 60
    while True:
        line = launcher.repair_nodes(instance_id, job)
        if "ended" in line or "(round " in line:
            return line
        assert time.monotonic() < deadline, line
        time.sleep(0.1)


def test_a_node_that_finished_early_and_went_runs_the_next_round_too(tmp_path, launcher):
    launcher.gang_wait_seconds = 1.0  # a node whose job ended waits this long, then goes
    command = ('echo "round=$COSTSCHED_GANG_ROUND rank=$SKYPILOT_NODE_RANK"; '
               'if [ "$SKYPILOT_NODE_RANK" = 1 ] && [ "$COSTSCHED_GANG_ROUND" = 1 ]; '
               'then exit 0; fi; exec sleep 60')
    job = spec(tmp_path, command, nodes=3)
    instance = launcher.launch(job)
    wait_for_log(launcher, instance.id, 1, "round=1 rank=1")
    folder = launcher.base_dir.resolve() / instance.id
    wait_until_gone = time.monotonic() + 30
    while gang.node_ended(gang.node_folder(folder, 1)).get("state") != "succeeded":
        assert time.monotonic() < wait_until_gone
        time.sleep(0.1)
    assert launcher.status(instance.id).state == "running"  # a node may finish early
    kept = node_pid(launcher, instance.id, 0)
    launcher.preempt_node(instance.id, 2)
    assert "(round 2)" in repaired(launcher, instance.id, job)[-1]
    for rank in (0, 1, 2):  # node 1 too, though it had finished: every node runs round 2
        wait_for_log(launcher, instance.id, rank, f"round=2 rank={rank}")
    assert node_pid(launcher, instance.id, 0) == kept


def test_rank_0_whose_job_fails_fails_the_gang(tmp_path, launcher):
    command = 'if [ "$SKYPILOT_NODE_RANK" = 0 ]; then exit 4; fi; sleep 60'
    instance = launcher.launch(spec(tmp_path, command))
    state = wait_state(launcher, instance.id, ("failed", "succeeded", "preempted"))
    seen = launcher.status(instance.id)
    assert state == "failed" and seen.detail.startswith("exit code 4"), seen.detail
    assert alive(node_pids(launcher, instance.id)) == []
    assert launcher.status(instance.id).state == "failed"  # every later read says the same


def repaired(launcher: LocalLauncher, instance_id: str, job: LaunchSpec) -> list[str]:
    """What `repair_nodes` said, call after call (as reconcile passes call it) until the
    gang resumed."""
    said: list[str] = []
    deadline = time.monotonic() + 60
    while not said or "(round " not in said[-1]:
        assert time.monotonic() < deadline, said
        line = launcher.repair_nodes(instance_id, job)
        if line:
            said.append(line)
        time.sleep(0.1)
    return said


def wait_for_log(launcher: LocalLauncher, instance_id: str, rank: int, text: str) -> None:
    deadline = time.monotonic() + 60
    while text not in launcher.logs(instance_id, node=rank):
        if time.monotonic() > deadline:
            raise AssertionError(f"node {rank}: {text!r} not in its log")
        time.sleep(0.1)


def test_a_node_whose_job_fails_fails_the_gang(tmp_path, launcher):
    command = 'if [ "$SKYPILOT_NODE_RANK" = 1 ]; then exit 3; fi; sleep 60'
    instance = launcher.launch(spec(tmp_path, command))
    state = wait_state(launcher, instance.id, ("failed", "succeeded", "preempted"))
    seen = launcher.status(instance.id)
    assert state == "failed" and seen.detail.startswith("node 1 failed: exit code 3")
    assert seen.detail.endswith("; the gang was ended")  # rank 0 had nothing to add: no '()'
    assert alive(node_pids(launcher, instance.id)) == []


def test_a_node_that_finishes_early_is_left_alone(tmp_path, launcher):
    command = 'if [ "$SKYPILOT_NODE_RANK" = 1 ]; then exit 0; fi; sleep 1.5'
    instance = launcher.launch(spec(tmp_path, command))
    assert wait_state(launcher, instance.id, ("failed", "succeeded", "preempted")) \
        == "succeeded"


def test_nodes_still_running_when_rank_0_ends_are_ended(tmp_path, launcher):
    command = 'if [ "$SKYPILOT_NODE_RANK" = 1 ]; then sleep 60; fi'
    instance = launcher.launch(spec(tmp_path, command))
    assert wait_state(launcher, instance.id, ("failed", "succeeded")) == "succeeded"
    assert alive(node_pids(launcher, instance.id)) == []


def test_the_launch_is_all_or_nothing(tmp_path, launcher, monkeypatch):
    real = LocalLauncher._spawn
    started: list[int] = []

    def spawn(self, folder, spec, envs, publish, **gang_args):  # noqa: ANN001, ANN003, ANN202
        if publish:  # rank 0, started last: it cannot start
            raise OSError(24, "Too many open files")
        child = real(self, folder, spec, envs, publish, **gang_args)
        started.append(child.pid)
        return child

    monkeypatch.setattr(LocalLauncher, "_spawn", spawn)
    with pytest.raises(InvalidInput, match="cannot be started"):
        launcher.launch(spec(tmp_path, "sleep 60", nodes=3))
    assert len(started) == 2 and alive(started) == []
    [instance] = launcher.instances(7)
    assert instance.state == "failed"


def test_terminate_and_preempt_end_every_node(tmp_path, launcher):
    first = launcher.launch(spec(tmp_path, "sleep 60", attempt="a1"))
    second = launcher.launch(spec(tmp_path, "sleep 60", attempt="a2"))
    for instance in (first, second):
        wait_state(launcher, instance.id, ("running",))
    pids = [node_pids(launcher, first.id), node_pids(launcher, second.id)]
    launcher.terminate(first.id)
    launcher.preempt(second.id)
    assert alive(pids[0] + pids[1]) == []
    assert os.path.isdir(launcher.base_dir / first.id / gang.NODES)


def test_one_node_is_preempted_from_the_command_line(tmp_path, launcher, capsys):
    from launchers import local

    instance = launcher.launch(spec(tmp_path, "sleep 60"))
    wait_state(launcher, instance.id, ("running",))
    assert local.main(["preempt", "7", "--node", "1", "--base-dir",
                       str(launcher.base_dir)]) == 0
    assert "node 1 of instance 7-a1" in capsys.readouterr().out
    seen = launcher.status(instance.id)
    assert seen.state == "running" and seen.lost_nodes == (1,)
    assert not (launcher.base_dir / instance.id / gang.NO_CAPACITY).exists()
    assert local.main(["preempt", "7", "--node", "1", "--no-capacity", "--base-dir",
                       str(launcher.base_dir)]) == 0
    assert (launcher.base_dir / instance.id / gang.NO_CAPACITY).exists()
