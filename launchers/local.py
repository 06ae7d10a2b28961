"""The local launcher, the embedded default: each instance is a real subprocess (the agent,
running the job) with its own directory under a base directory, so that a whole plan ->
launch -> migrate -> preempt -> finish cycle runs on one machine.

    base_dir/<job_id>-<attempt>/
        instance.json   the launch: spec, offering, tags, the agent's pid and start time
        code/           the job's code, unpacked by the agent: where setup and the job run
        checkpoints/    the job's checkpoint directory (the agent restores and publishes)
        job.log         the job's output;  agent.log: the agent's
        status.json     written by the agent: the job's step while it runs, its end after
        heartbeat       written by the agent every poll interval: its sign of life
        progress        the job's step, written by the job ($COSTSCHED_PROGRESS_FILE)
        terminated      present once terminate() ran;  notice: once notice() ran;
                        agent-lost: once the job was stopped because its agent was gone
        preempted       when preempt or notice took it away (`launchers.local_lost`)
        gang.json, nodes/   a multi-node job's rounds and its other nodes (launchers.gang)
    base_dir/.index.json, .jobs/   lets a listing open only the changed folders (local_index)

Everything is in files, so a new LocalLauncher on the same base directory (costsched
restarted) sees the same instances; the pid is checked against its start time in /proc so
that a reused pid is never taken for the agent. `preempt` and `notice` simulate a cloud
taking the instance away, without and with a preemption notice; `preempt_node` one node of
a gang. The instance's environment is `launchers.local_env`'s, its processes are handled
by `launchers.local_procs`, its record and the marks in its folder by `launchers.local_records`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from stat import S_ISDIR
from typing import Any, ClassVar

from costsched import restored as restored_doc
from costsched.model import InvalidInput, Offering
from launchers import gang, mounts
from launchers.base import Instance, Launcher, LaunchSpec
from launchers.cloud_times import utc
from launchers.json_files import read_json, write_json
from launchers.local_env import ENV_INSTANCES, default_base_dir, instance_environment
from launchers.local_index import ID, INDEX, JOBS, Index, Seen, attempts, note_attempt
from launchers.local_lost import last_step, lost_at, mark_taken
from launchers.local_procs import find_agent, reap, reap_when_ended, signal_group, signal_pid
from launchers.local_records import (
    AGENT_LOST,
    INSTANCE,
    NAME_RULE,
    NOTICE,
    TERMINATED,
    ended_at,
    ended_first,
    instance_id_of,
    new_record,
    says_ended,
)
from launchers.procfs import GroupTable, group_members, has_proc, proc_stat
from launchers.progress_readings import checkpoint_step, checkpoint_version, inferred, step_time
from launchers.status_file import STATUS, no_step_after, setup_seconds, write_status

# Where the launcher keeps things, as the tests and tools know them by this module.
__all__ = ["ENV_INSTANCES", "INDEX", "INSTANCE", "JOBS", "LocalLauncher", "default_base_dir",
           "instance_environment", "main"]

_WAIT = 0.05  # seconds between looks at a process group that should end
_KILL_WAIT = 10.0  # seconds a SIGKILLed group may take to go (a process in disk I/O)
_SETTLE_NS = 2_000_000_000  # a folder unchanged this long is trusted to the index
_MOVING = ("pending", "running")  # states that change without a file changing


class LocalLauncher(Launcher):
    name: ClassVar[str] = "local"
    sees_agents: ClassVar[bool] = True  # its agents' processes, and their heartbeat files
    runs_gangs: ClassVar[bool] = True  # a multi-node job as N agents (launchers.gang)

    def __init__(self, base_dir: Path | None = None, grace_seconds: float = 10,
                 python: str = sys.executable, poll_seconds: float = 2.0,
                 start_grace_seconds: float = 60.0,
                 pass_env: Sequence[str] | None = None) -> None:
        self.base_dir = Path(base_dir) if base_dir is not None else default_base_dir()
        self.start_grace_seconds = start_grace_seconds  # a launch's time to start its agent
        self.grace_seconds = grace_seconds
        self.python = python
        self.poll_seconds = poll_seconds  # the agent's publish interval
        # How long a gang's node whose round ended waits for the next (launchers.gang_agent)
        self.gang_wait_seconds = 3600.0
        self._children: dict[str, subprocess.Popen] = {}  # reaped as they end
        self._index = Index()
        # The machine's settings a job keeps (config launch.pass_env when None).
        self.pass_env = None if pass_env is None else tuple(pass_env)

    # --- Launcher ------------------------------------------------------------------------

    def cannot_run(self, task: Mapping[str, Any]) -> str:
        from launchers import containers
        from launchers.mounts import sdk_missing

        image = containers.image_of(task)
        missing = containers.runtime_missing() if image else ""
        if not missing:
            return sdk_missing(task)  # a bucket it copies down here, with its client
        return (f"field resources.image_id: docker:{image}: the local launcher runs the job "
                f"on this machine, which has {missing}, or launch on aws or gcp")

    def can_launch(self, offering: Offering) -> bool:
        return True

    def launch(self, spec: LaunchSpec) -> Instance:
        instance_id = instance_id_of(spec)
        base = self._base(create=True)
        folder = self._folder(instance_id, base)
        try:
            note_attempt(base, spec.job_id, spec.attempt)  # before the folder exists
        except OSError as exc:
            raise InvalidInput(f"local launcher base directory {base}: not writable "
                               f"({exc.strerror})") from None
        try:
            folder.mkdir()
        except FileExistsError:  # this attempt was launched before: never a second agent
            return self._relaunch(instance_id, folder, spec)
        except OSError as exc:
            raise InvalidInput(f"local launcher base directory {base}: not writable "
                               f"({exc.strerror})") from None
        record = new_record(instance_id, spec)
        write_json(folder / INSTANCE, record)  # before the agent: a crash leaves a trace
        return self._start(instance_id, folder, spec, record)

    def status(self, instance_id: str) -> Instance:
        folder = self._existing(instance_id)
        seen = self._read(instance_id, folder)
        if seen is None:
            raise InvalidInput(f"instance {instance_id!r}: {folder / INSTANCE} is unreadable")
        return seen.instance

    def statuses(self, instance_ids: Sequence[str]) -> dict[str, Instance]:
        """Each asked folder looked up (the directory is not listed), the process table
        read at most once; an instance that settled is answered from the index without
        opening its folder. Unknown and malformed ids are left out."""
        wanted = set(instance_ids)
        return {name: seen.instance for name, seen in self._snapshot(wanted).items()}

    def request_stop(self, instance_id: str) -> None:
        record = read_json(self._existing(instance_id) / INSTANCE)
        if self._alive(instance_id, record):
            signal_pid(record["pid"], signal.SIGTERM)

    def terminate(self, instance_id: str) -> None:
        folder = self._existing(instance_id)
        (folder / TERMINATED).touch()  # first: a crash half-way still reads as terminated
        record = read_json(folder / INSTANCE)
        if self._alive(instance_id, record):
            signal_group(record["pid"], signal.SIGTERM)
        self._end(instance_id, record, self.grace_seconds)
        gang.end_nodes(self, instance_id, folder, self.grace_seconds)

    def instances(self, job_id: int | None = None) -> list[Instance]:
        if job_id is None:
            found = self._snapshot()
        else:  # a folder is named <job id>-<attempt>: a job's are found by their names
            names = attempts(self._base(), int(job_id))
            found = (self._snapshot(prefix=f"{int(job_id)}-") if names is None
                     else self._snapshot(names))
        return [seen.instance for _, seen in sorted(found.items(),
                                                    key=lambda i: (i[1].launched_at, i[0]))
                if job_id is None or seen.instance.job_id == job_id]

    def logs(self, instance_id: str, tail: int = 200, node: int = 0) -> str:
        """The last `tail` lines of the job's output on node `node` (0: rank 0)."""
        from launchers.agent_workdir import JOB_LOG
        folder = self._existing(instance_id)
        if node and node not in gang.ranks(folder):
            raise InvalidInput(f"instance {instance_id}: no node {node} (its nodes: 0"
                               + "".join(f", {r}" for r in gang.ranks(folder)) + ")")
        path = gang.node_folder(folder, node) / JOB_LOG
        try:
            with path.open(errors="replace") as handle:
                return "".join(deque(handle, maxlen=tail))
        except FileNotFoundError:
            return ""

    def node_logs(self, instance_id: str, tail: int = 200) -> list[tuple[str, str]]:
        """A gang's output, every node of every round (`gang.node_folders`: a node lost
        and replaced has both logs), as (which node, its last `tail` lines); one node's
        instance: [("node 0", its output)]."""
        from launchers.agent_workdir import JOB_LOG
        folder = self._existing(instance_id)
        out = []
        for said, where in gang.node_folders(folder):
            try:
                with (where / JOB_LOG).open(errors="replace") as handle:
                    out.append((said, "".join(deque(handle, maxlen=tail))))
            except FileNotFoundError:
                out.append((said, ""))
        return out

    def job_name(self, instance_id: str) -> str:
        """The name of the job the instance runs, as launched ('' when not said)."""
        name = read_json(self._folder(instance_id) / INSTANCE).get("job_name")
        return name if isinstance(name, str) else ""

    # --- simulations (tests and the demo) ------------------------------------------------

    def environment(self) -> dict[str, str]:
        return {ENV_INSTANCES: str(self._base())}

    def preempt(self, instance_id: str) -> None:
        """Take the instance away without notice: SIGKILL its whole process group."""
        folder = self._existing(instance_id)
        record = read_json(folder / INSTANCE)
        mark_taken(folder)
        self._end(instance_id, record, 0)
        gang.end_nodes(self, instance_id, folder, 0)

    def preempt_node(self, instance_id: str, rank: int, capacity: bool = True) -> None:
        """Take one node of a gang away without notice (rank 0: the instance's own);
        `capacity` False: and none is left where it ran, so that it cannot be replaced
        there (the gang then moves)."""
        folder = self._existing(instance_id)
        if not capacity:
            (folder / gang.NO_CAPACITY).touch()
        if rank == 0:
            mark_taken(folder)
            self._end(instance_id, read_json(folder / INSTANCE), 0)
            return
        if rank not in gang.ranks(folder):
            raise InvalidInput(f"instance {instance_id}: no node {rank}")
        record = gang.read_json(gang.node_folder(folder, rank) / gang.NODE)
        self._end(f"{instance_id}/{rank}", record, 0)

    def notice(self, instance_id: str) -> None:
        """A preemption notice: SIGTERM (the agent stops the job, which checkpoints), then
        the instance is taken away, killed after grace_seconds if still alive."""
        folder = self._existing(instance_id)
        (folder / NOTICE).touch()
        record = read_json(folder / INSTANCE)
        if self._alive(instance_id, record):
            signal_pid(record["pid"], signal.SIGTERM)
        self._end(instance_id, record, self.grace_seconds)
        mark_taken(folder)  # taken away after the grace: billed until then
        gang.end_nodes(self, instance_id, folder, self.grace_seconds)

    # --- internals -----------------------------------------------------------------------

    def _read(self, instance_id: str, folder: Path, groups: GroupTable | None = None
              ) -> Seen | None:
        """The instance in `folder` now; None when it has no readable record (yet)."""
        record = read_json(folder / INSTANCE)
        if not (isinstance(record.get("job_id"), int) and "attempt" in record
                and "offering_key" in record):
            return None
        status = read_json(folder / STATUS)
        terminated = (folder / TERMINATED).exists()
        if terminated or says_ended(status):
            self._reap_child(instance_id)  # its state is in the files: no process to ask
            alive = False
        else:
            alive = self._alive(instance_id, record, groups)
            if not alive:  # the agent writes its end before it exits: read it again, so
                # that an end written since the first read is not taken for a kill
                status = read_json(folder / STATUS)
                terminated = (folder / TERMINATED).exists()
        ended = status if says_ended(status) else {}
        lost: tuple[int, ...] = ()
        replacing: tuple[int, ...] = ()
        agent = ""
        if terminated and not ended_first(folder, ended):
            state, detail = "terminated", "terminated by costsched"
        elif ended:
            state, detail = ended.get("state", "failed"), ended.get("detail", "")
            if (folder / NOTICE).exists() and state == "stopped":
                state, detail = "preempted", f"after a preemption notice: {detail}"
        elif alive:
            state, detail = "running", ""
            agent = self._agent_trouble(folder, record)
        elif record.get("pid") is None:
            state, detail = self._unstarted(instance_id, folder, record)
        else:
            state, detail = "preempted", "process gone without a status (killed)"
        if record.get("nodes", 1) > 1:
            view = gang.gang_state(self, instance_id, folder, record, status, state, detail)
            if view.again:  # the gang was ended just now: read its end
                return self._read(instance_id, folder)
            state, detail, lost, replacing = view.state, view.detail, view.lost, view.replacing
            if not view.exit_code:
                ended = {**ended, "exit_code": view.node_exit}
        step, step_at = last_step(folder, status.get("step"), step_time(status.get("step_at")),
                                  state)
        instance = Instance(id=instance_id, job_id=record["job_id"], attempt=record["attempt"],
                            offering_key=tuple(record["offering_key"]), state=state,
                            exit_code=ended.get("exit_code"), detail=detail,
                            step=step, step_at=step_at, ran="step" in status,
                            checkpoint_step=checkpoint_step(status),
                            checkpoint_version=checkpoint_version(status),
                            checkpoint_step_inferred=inferred(status),
                            restored=restored_doc.read(status.get("restored")),
                            phase=str(status.get("phase") or ""),
                            checkpoint_error=agent or str(status.get("checkpoint_error") or ""),
                            agent=agent, lost_nodes=lost, replacing=replacing,
                            created_at=utc(record.get("launched_at")),
                            lost_at=lost_at(folder) if state == "preempted" else None,
                            ended_at=ended_at(folder) if ended and state in (
                                "succeeded", "failed") else None,
                            setup_since=step_time(status.get("setup_since"))
                            if state == "running" else None,
                            setup_seconds=setup_seconds(status),
                            no_step_after=no_step_after(status) if state == "running"
                            else None)
        return Seen(instance, str(record.get("launched_at", "")))

    def _agent_trouble(self, folder: Path, record: dict) -> str:
        """Why the agent of a running instance no longer looks after its job ('' when it
        does): `launchers.agent_recovery.trouble`."""
        from launchers import agent_recovery
        return agent_recovery.trouble(folder, record.get("pid"), record.get("start_time"),
                                      self.poll_seconds)

    def repair_nodes(self, instance_id: str, spec: LaunchSpec) -> str:
        """`Launcher.repair_nodes` for a local gang (`launchers.gang_repair`)."""
        from launchers import gang_repair

        folder = self._existing(instance_id)
        return gang_repair.repair(self, instance_id, folder, read_json(folder / INSTANCE),
                                  spec)

    def recover_agent(self, instance_id: str) -> bool:
        """`Launcher.recover_agent` for a local instance (`launchers.agent_recovery`)."""
        from launchers import agent_recovery
        folder = self._existing(instance_id)
        record = read_json(folder / INSTANCE)
        if record.get("pid") is None or not self._alive(instance_id, record):
            return True  # nothing runs: the next look sees it ended
        (folder / AGENT_LOST).touch()
        agent_recovery.recover(
            folder, record["pid"], record.get("start_time"), record["checkpoint_uri"],
            reap=lambda: self._reap_child(instance_id),
            end_job=lambda: self._end(instance_id, record, self.grace_seconds))
        return True

    def _snapshot(self, names: set[str] | None = None, prefix: str | None = None
                  ) -> dict[str, Seen]:
        """The instances of the base directory: those named in `names` (their folders
        looked up, the directory not listed), or whose names start with `prefix`, or all
        (one listing of the directory). A folder that has not changed since
        its instance settled (ended, or not running any more) is answered from the index
        (INDEX), keyed by the folder's change time: every change to an instance's state
        renames or creates a file in its folder, which moves that time."""
        base = self._base()
        if names is not None:
            listed = sorted(names)
        else:
            try:
                listed = os.listdir(base)  # names only: a folder is stat()ed if wanted
            except FileNotFoundError:
                return {}
        if prefix is not None:
            listed = [n for n in listed if n.startswith(prefix)]
        index = self._index.load(base)
        groups = GroupTable()  # the process table, read once if any instance needs it
        settled_before = time.time_ns() - _SETTLE_NS
        seen: dict[str, Seen] = {}
        settled: dict[str, tuple[int, Seen]] = {}
        for name in listed:
            if not ID.fullmatch(name):
                continue
            try:
                info = os.lstat(base / name)
            except (FileNotFoundError, NotADirectoryError):
                continue
            if not S_ISDIR(info.st_mode):  # a file, or a symlink planted under base
                continue
            changed = info.st_ctime_ns
            kept = index.get(name)
            if kept is not None and kept[0] == changed:
                seen[name] = kept[1]
                continue
            found = self._read(name, base / name, groups)
            if found is None:
                continue
            seen[name] = found
            # Only a change older than the clock's and the file system's resolution is
            # trusted: a write within the same tick would not move the change time.
            if found.instance.state not in _MOVING and changed < settled_before:
                settled[name] = (changed, found)
        gone = ({n for n in index if n not in seen}
                if names is None and prefix is None else set())
        if settled or gone:
            self._index.save(base, settled, gone)
        return seen

    def _base(self, create: bool = False) -> Path:
        base = self.base_dir.expanduser().resolve()
        if create:
            try:
                base.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InvalidInput(f"local launcher base directory {base}: cannot be created "
                                   f"({exc.strerror})") from None
            if not os.access(base, os.W_OK | os.X_OK):
                raise InvalidInput(f"local launcher base directory {base}: not writable")
        return base

    def _folder(self, instance_id: str, base: Path | None = None) -> Path:
        base = base or self._base()
        if not isinstance(instance_id, str) or not ID.fullmatch(instance_id):
            raise InvalidInput(f"instance {instance_id!r}: expected <job id>-<attempt> "
                               f"(attempt: {NAME_RULE})")
        folder = (base / instance_id).resolve()
        if folder.parent != base:  # a symlink planted under base
            raise InvalidInput(f"instance {instance_id!r}: outside the base directory {base}")
        return folder

    def _existing(self, instance_id: str) -> Path:
        folder = self._folder(instance_id)
        if not (folder / INSTANCE).is_file():
            raise InvalidInput(f"instance {instance_id!r}: unknown to the local launcher "
                               f"at {self._base()}")
        return folder

    def _start(self, instance_id: str, folder: Path, spec: LaunchSpec, record: dict) -> Instance:
        nodes = gang.node_count(spec.task)
        envs = gang.node_envs(0, nodes, spec.offering.gpu_count)  # one node too, as SkyPilot
        unapplied = mounts.local_note(spec.task, folder / "mounts")
        try:
            if unapplied:  # said once, at the head of the instance's logs: the job's
                from launchers.agent_workdir import JOB_LOG
                for log in ("agent.log", JOB_LOG):  # too, as `costsched logs` shows it
                    (folder / log).write_text(unapplied + "\n")
            if nodes > 1:  # all or nothing: ranks 1.. first, ended if rank 0 cannot start
                gang.start_gang(self, instance_id, folder, spec, nodes)
            child = self._spawn(folder, spec, envs, publish=True,
                                gang_file=folder / gang.GANG if nodes > 1 else None)
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the command or envs
            gang.end_nodes(self, instance_id, folder, 0)
            why = getattr(exc, "strerror", None) or str(exc)
            detail = (f"python {self.python!r}: cannot be started ({why})"
                      if isinstance(exc, OSError) else f"the job cannot be started: {why}")
            # The instance reads as failed (not pending for ever): nothing runs or bills.
            write_status(folder, {"state": "failed", "exit_code": None,
                                  "checkpoint_version": None, "detail": detail})
            raise InvalidInput(detail) from None
        self._children[instance_id] = child
        stat = proc_stat(child.pid)
        record = {**record, "pid": child.pid, "start_time": stat.start_time if stat else None}
        write_json(folder / INSTANCE, record)
        return self.status(instance_id)

    def _spawn(self, folder: Path, spec: LaunchSpec, node_envs: dict[str, str],
               publish: bool, gang_file: Path | None = None,
               rank: int = 0) -> subprocess.Popen:
        """An agent for the job in `folder` (OSError, ValueError when it cannot start);
        a gang's node (`gang_file`: the gang's rounds) of rank `rank`."""
        from launchers import containers
        env = instance_environment({**spec.envs, **node_envs}, self.python, self._pass_env())
        argv = [self.python, "-m", "launchers.agent", "--job-id", str(spec.job_id),
                "--checkpoint-uri", spec.checkpoint_uri, "--workdir", str(folder),
                "--poll", str(self.poll_seconds)]
        if not publish:
            argv += ["--no-publish"]
        if gang_file is not None:
            argv += ["--gang-file", str(gang_file), "--rank", str(rank),
                     "--grace", str(self.grace_seconds),
                     "--gang-wait", str(self.gang_wait_seconds)]
        if spec.code_uri:
            argv += ["--code-uri", spec.code_uri, "--code-sha256", spec.code_sha256,
                     "--code-size", str(spec.code_size)]
        if spec.setup:
            argv += ["--setup", spec.setup]
        for name in spec.masked_names:  # their values: masked in the job's log
            argv += ["--mask-env", name]
        argv += mounts.agent_args(spec.task, str(folder / "mounts"))
        argv += containers.agent_args(spec.task, [*spec.envs, *node_envs, *self._pass_env()],
                                      gpus=shutil.which("nvidia-smi") is not None)
        argv += ["--", spec.command]
        # In the node's own directory: the job runs in its unpacked code (folder/code),
        # never in the directory costsched was started from.
        with (folder / "agent.log").open("ab") as out:
            child = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     cwd=folder)
        reap_when_ended(child)
        return child

    def _pass_env(self) -> tuple[str, ...]:
        if self.pass_env is None:
            from costsched.config import effective

            self.pass_env = tuple(effective().launch.pass_env)
        return self.pass_env

    def _relaunch(self, instance_id: str, folder: Path, spec: LaunchSpec) -> Instance:
        record = read_json(folder / INSTANCE)
        if record.get("pid") is not None:
            return self.status(instance_id)
        pid = find_agent(folder)  # a launch that crashed between starting and recording
        if pid is not None:
            stat = proc_stat(pid)
            write_json(folder / INSTANCE, {**record, "pid": pid,
                                            "start_time": stat.start_time if stat else None})
            return self.status(instance_id)
        return self._start(instance_id, folder, spec, record or new_record(instance_id, spec))

    def _unstarted(self, instance_id: str, folder: Path, record: dict) -> tuple[str, str]:
        """An instance whose agent's pid was never recorded (costsched stopped mid-launch):
        its agent is adopted if it runs; else it is pending for `start_grace_seconds`
        after the launch, then failed (the next candidate is launched)."""
        pid = find_agent(folder)
        if pid is not None:
            stat = proc_stat(pid)
            write_json(folder / INSTANCE, {**record, "pid": pid,
                                            "start_time": stat.start_time if stat else None})
            return "running", "agent adopted after an interrupted launch"
        try:
            launched = datetime.fromisoformat(record.get("launched_at", ""))
        except ValueError:
            launched = datetime.min.replace(tzinfo=timezone.utc)
        age = (datetime.now(timezone.utc) - launched).total_seconds()
        if age < self.start_grace_seconds:
            return "pending", "launch in progress"
        return "failed", "the agent never started (the launch was interrupted)"

    def _reap_child(self, instance_id: str) -> None:
        child = self._children.get(instance_id)
        if child is not None and child.poll() is not None:
            del self._children[instance_id]

    def _alive(self, instance_id: str, record: dict, groups: GroupTable | None = None
               ) -> bool:
        """Whether the instance's process group has a live process (zombies are reaped).
        `groups`: a process table shared by many instances (else /proc is read here)."""
        self._reap_child(instance_id)
        pid, start = record.get("pid"), record.get("start_time")
        if pid is None:
            return False
        if not has_proc():
            try:
                os.killpg(pid, 0)
                return True
            except ProcessLookupError:
                return False
        leader = proc_stat(pid)
        if leader is not None and leader.start_time != start:
            return False  # the pid is someone else's now, so our group is gone
        if leader is not None and leader.state != "Z" and leader.pgrp == pid:
            return True  # the leader lives: no need to look for the rest of its group
        if leader is not None and leader.state == "Z":
            reap(pid)
        if groups is not None:
            return groups.has_members(pid)
        return bool(group_members(pid))

    def _end(self, instance_id: str, record: dict, grace: float) -> None:
        """Wait up to `grace` seconds for the group to end, then SIGKILL it and wait; then
        stop the containers its agent left (a job in a Docker image: its container, in the
        runtime's care, outlives a docker client killed with the agent), so that a relaunch
        never runs beside it."""
        from launchers import containers
        deadline = time.monotonic() + grace
        while self._alive(instance_id, record) and time.monotonic() < deadline:
            time.sleep(_WAIT)
        if self._alive(instance_id, record):
            signal_group(record["pid"], signal.SIGKILL)
            deadline = time.monotonic() + _KILL_WAIT
            while self._alive(instance_id, record) and time.monotonic() < deadline:
                time.sleep(_WAIT)
        instance, _, rank = instance_id.partition("/")  # a gang's node: ID/RANK
        folder = gang.node_folder(self._folder(instance), int(rank or 0))
        containers.Container("", folder).stop_left(grace)




def main(argv: list[str] | None = None) -> int:
    """`python -m launchers.local preempt|notice JOB [--base-dir DIR]`: simulate a cloud
    taking a job's running instance away (`launchers.local_simulate`)."""
    from launchers.local_simulate import main as simulate

    return simulate(LocalLauncher, argv)


if __name__ == "__main__":
    sys.exit(main())
