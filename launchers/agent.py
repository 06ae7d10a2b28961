"""The agent: runs on an instance around the job's command, costsched's side of the job
contract.

    python -m launchers.agent --job-id 7 --checkpoint-uri s3://bucket/jobs/7 \\
        --workdir /var/lib/costsched [--poll 5] [--notice-url URL] \\
        [--code-uri URI --code-sha256 SHA --code-size BYTES] [--setup CMD] -- 'python train.py'

It fetches the job's code archive, verifies it (size, SHA-256, every entry inside) and
unpacks it into WORKDIR/code, once per instance; restores the newest verified checkpoint
into WORKDIR/checkpoints; runs the setup commands once per instance in WORKDIR/code (a
failing setup fails the attempt: status.json says "phase": "setup" and its exit code);
then starts the command there (bash -c, or /bin/sh -c without bash: launchers.job_shell;
output, setup's included, to WORKDIR/job.log, the values of its --mask-env variables, its
secrets, masked: launchers.log_masking) with COSTSCHED_JOB_ID, COSTSCHED_CHECKPOINT_DIR,
CHECKPOINT_DIR and COSTSCHED_PROGRESS_FILE added to its environment (and, with file
mounts, COSTSCHED_MOUNTS: the folder they are under, --mount-root; '' where they are at
their own paths, so the job reads /data as $COSTSCHED_MOUNTS/data), and every poll
interval publishes the checkpoint directory once a set is whole (`launchers.publisher`;
sooner when the publisher asks for a look, a set of files replaced together being quiet
by then), checks the cloud's preemption notice, and reads the step the job wrote to its
progress file. SIGTERM to the agent, or a notice, becomes SIGTERM for the job.
WORKDIR/status.json (written atomically)
says {"state": "running", "step", "step_at", "checkpoint_version", "checkpoint_step",
"checkpoint_step_inferred", "checkpoint_error"} while the job runs (with "no_step_after":
s once its command has run that many seconds without writing its step: a minute, or three
of its checkpoint intervals when shorter, `launchers.unseen`),
and once it has exited
(after a last publish) {"state": "stopped" | "succeeded" | "failed", "exit_code",
"checkpoint_version", "checkpoint_step", "checkpoint_step_inferred", "detail", "step",
"step_at", "checkpoint_error"}; "step_at" is when the job wrote that step (Unix seconds;
None when not read in this run). While setup runs, it says {"state": "running",
"setup_since": when setup began (Unix seconds), "checkpoint_version", "checkpoint_step",
"checkpoint_step_inferred", "checkpoint_error"}, with no "step": the job's command has not
begun; it is rewritten without "setup_since" as soon as setup ends, and from then on
(its end's too) says "setup_seconds", how long this instance's setup took (0 without a
setup; kept in WORKDIR/.setup-done for an agent started again). "checkpoint_step" is
the step of the newest version this instance published or restored (where a start from
it resumes; None when not known): its commit marker's, else its new files' names', else
the one the job had reported when they were written ("checkpoint_step_inferred": true;
`launchers.progress_readings`); a restored version's as the agent that published it kept
it (`launchers.version_steps`). Once it has restored, every status says "restored": the
version it restored and its step, and the newer versions it skipped (damaged) with why and
their steps (`costsched.restored`): where the job really resumed from.

The job runs in the agent's process group (which the agent leads), so that a signal to the
group reaches every process of the job, and killing the group is killing the instance.

WORKDIR/heartbeat ({"pid", "at": Unix seconds}, written atomically) is the agent's sign of
life: rewritten at start and every poll interval while it restores, runs setup and watches
the job (`launchers.heartbeats`; with --attempt and --heartbeat-seconds, also beside the
checkpoints, with the job's step and its newest checkpoint's, and its status file's
"no_step_after" and "checkpoint_error" while the job runs, which the cloud launchers
read). A launcher that finds the agent gone (its process, or its heartbeat stale) while
the job runs knows nothing publishes the job's checkpoints any more
(`launchers.agent_recovery`).

With --image, setup and the command run in containers of a Docker image
(`launchers.containers`): the image is pulled before setup ("phase": "image" when it cannot
be), and SIGTERM to the agent reaches the container's processes as it reaches a job's.

With --gang-file, the agent is one node of a gang (--rank): it runs the job in rounds,
paused and resumed by the launcher (`launchers.gang_agent`). Publishing is
`launchers.publisher`'s, the preemption notice `launchers.notices`'. The run loop is
`launchers.agent_loop`'s, the process group's signals `launchers.job_group`'s, the names of
the working directory's files `launchers.agent_workdir`'s.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import signal
import sys
from pathlib import Path

from launchers.agent_loop import Agent, Code
from launchers.checkpoints import open_store
from launchers.containers import Container
from launchers.gang_agent import GangFile, Rounds
from launchers.job_group import become_group_leader, on_sigterm
from launchers.notices import metadata_url, redact
from launchers.progress_readings import INFERRED
from launchers.status_file import write_status

log = logging.getLogger("costsched.agent")

ENV_POLL = "COSTSCHED_AGENT_POLL"  # the default --poll (seconds)


class MountFailed(RuntimeError):
    """A task's file mount that could not be made: the attempt fails before setup."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m launchers.agent",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--job-id", type=int, required=True)
    parser.add_argument("--checkpoint-uri", required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--poll", type=float, default=float(os.environ.get(ENV_POLL) or 5.0),
                        help="seconds between checkpoint publishes and notice checks")
    parser.add_argument("--notice-url", help="a cloud's preemption-notice metadata URL")
    parser.add_argument("--code-uri", default="", help="the job's code archive")
    parser.add_argument("--code-sha256", default="", help="its SHA-256, checked on fetch")
    parser.add_argument("--code-size", type=int, default=0, help="its size in bytes")
    parser.add_argument("--setup", default="", help="shell commands run once per instance "
                        "in the unpacked code, before the command")
    parser.add_argument("--attempt", default="", help="the launch attempt of this instance: "
                        "names its heartbeat beside the checkpoints")
    parser.add_argument("--heartbeat-seconds", type=float, default=0.0,
                        help="write the heartbeat beside the checkpoints this often "
                        "(0: never; for launchers that cannot see the agent's process)")
    parser.add_argument("--mounts", default="", help="the task's file mounts (JSON; "
                        "launchers.mounts)")
    parser.add_argument("--mount-root", default="", help="the folder the mounts go under")
    parser.add_argument("--checkpoint-at", default="", help="where the task mounts its "
                        "checkpoint bucket: a link to the checkpoint directory")
    parser.add_argument("--image", default="", help="setup and the command run in this "
                        "Docker image (JSON: launchers.containers.agent_args)")
    parser.add_argument("--no-publish", action="store_true",
                        help="restore the checkpoints but never publish them (a gang's "
                        "nodes other than rank 0: rank 0 publishes)")
    parser.add_argument("--gang-file", type=Path, default=None,
                        help="a gang's node: the gang's rounds (launchers.gang_agent)")
    parser.add_argument("--rank", type=int, default=0, help="a gang's node: its rank")
    parser.add_argument("--gang-doc", default="", help="a cloud gang's node: its digest; "
                        "the rounds come from the gang's document beside the checkpoints "
                        "(launchers.cloud_gang)")
    parser.add_argument("--gang-exit-wait", type=float, default=None,
                        help="a gang's node: seconds to wait for a new round after its job "
                        "exited by itself (default: --gang-wait)")
    parser.add_argument("--gang-wait", type=float, default=3600.0,
                        help="a gang's node: seconds to wait for the launcher's word after "
                        "its round ended")
    parser.add_argument("--grace", type=float, default=10.0,
                        help="a gang's node: seconds a paused job has to stop")
    parser.add_argument("--mask-env", action="append", default=[], metavar="NAME",
                        help="a secret's variable: its value is masked in the job's log")
    parser.add_argument("command", nargs="+", help="after --: one shell string")
    args = parser.parse_args(argv)
    if args.poll <= 0:
        parser.error(f"poll {args.poll}: expected seconds > 0")
    # one string is a shell command; several words are quoted as they are
    args.command = args.command[0] if len(args.command) == 1 else shlex.join(args.command)
    return args


def _container(args: argparse.Namespace, workdir: Path) -> Container:
    """The job's image: its file mounts at the task's paths (placed under --mount-root on
    the instance)."""
    from launchers.mounts import place

    tasks = json.loads(args.mounts) if args.mounts else []
    return Container.from_args(args.image, workdir, [
        (str(place(m["path"], args.mount_root)), str(Path(m["path"]).expanduser()))
        for m in tasks])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s agent: %(message)s")
    logging.getLogger("launchers.checkpoints").setLevel(logging.WARNING)  # we say it once
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    become_group_leader()
    try:
        store = open_store(args.checkpoint_uri)
    except ValueError as exc:  # InvalidInput
        log.error("%s", exc)
        write_status(workdir, {"state": "failed", "exit_code": None, "checkpoint_version": None,
                               "detail": str(exc)})
        return 2
    code = Code(args.code_uri, args.code_sha256, args.code_size) if args.code_uri else None
    notice_url = metadata_url(args.notice_url) if args.notice_url else None
    agent = Agent(args.job_id, store, workdir, args.command, args.poll, notice_url, code,
                  args.setup, args.attempt, args.heartbeat_seconds)
    agent.publisher.enabled = not args.no_publish
    agent.grace = args.grace
    agent.masked = tuple(args.mask_env)
    if args.image:
        agent.container = _container(args, workdir)
    if args.mounts or args.checkpoint_at:  # in a container, at the task's own paths
        agent.mounts_at = "" if args.image or not args.mount_root else \
            str(Path(args.mount_root).resolve())
    if args.gang_file is not None:
        agent.rounds = Rounds(GangFile(args.gang_file), args.rank, args.gang_wait,
                              args.gang_exit_wait)
    elif args.gang_doc:
        from launchers.cloud_gang import StoreGangFile

        agent.rounds = Rounds(StoreGangFile(args.checkpoint_uri, args.gang_doc, args.rank,
                                            every=args.poll),
                              args.rank, args.gang_wait, args.gang_exit_wait)
    log.info("job %d, checkpoints %s", args.job_id, redact(store.uri))
    try:
        if args.mounts or args.checkpoint_at:  # the task's file mounts, before its setup
            from launchers import mounts

            try:
                for line in mounts.prepare(json.loads(args.mounts or "[]"), args.mount_root):
                    log.info("mount: %s", redact(line))
            except (ValueError, OSError) as exc:  # our own words, or the system's: one line
                raise MountFailed(str(exc)) from None
            if args.checkpoint_at and agent.container is None:  # a container binds it
                log.info("mount: %s", mounts.link_checkpoints(
                    args.checkpoint_at, agent.checkpoints, args.mount_root))
        status = agent.run()
    except MountFailed as exc:
        log.error("file mounts: %s", exc)
        status = {"state": "failed", "phase": "file_mounts", "exit_code": None,
                  "checkpoint_version": agent.publisher.version, "detail": str(exc)}
    except Exception as exc:
        log.exception("agent failed")
        status = {"state": "failed", "exit_code": None,
                  "checkpoint_version": agent.publisher.version,
                  "detail": f"agent: {type(exc).__name__}: {exc}"}
    write_status(workdir, {"checkpoint_step": agent.checkpoint_step,  # (a restored one's)
                           INFERRED: agent.checkpoint_inferred, **status})
    log.info("%s: %s", status["state"], status["detail"])
    return status["exit_code"] if status["exit_code"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
