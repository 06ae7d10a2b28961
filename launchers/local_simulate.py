"""`python -m launchers.local preempt|notice JOB [--base-dir DIR]`: simulate a cloud
taking a job's running instance away, without or with a preemption notice. JOB is the
job's id or its name, as `costsched status` lists them, or an instance's name (its folder
under the base directory, as `costsched logs` names it: 1-8b59a22ecc-j1-m1-0)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from costsched.vocabulary import did_you_mean


def main(launcher_class: Any, argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m launchers.local",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("preempt", "notice"))
    parser.add_argument("job", help="the job's id or name, as `costsched status` lists it, "
                        "or an instance's name (its folder under --base-dir)")
    parser.add_argument("--base-dir", type=Path, default=None,
                        help="the local launcher's instances (default: $COSTSCHED_INSTANCES, "
                        "else instances in the user data directory, as costsched's own)")
    parser.add_argument("--node", type=int, default=None,
                        help="preempt: one node of a multi-node job (its rank)")
    parser.add_argument("--no-capacity", action="store_true",
                        help="preempt --node: and leave no capacity where it ran, so that "
                        "the job moves")
    args = parser.parse_args(argv)
    if args.action == "notice" and args.node is not None:
        print("notice --node: a notice takes the whole instance; `preempt JOB --node N` "
              "takes one node", file=sys.stderr)
        return 2
    if args.no_capacity and args.node is None:
        print("preempt --no-capacity: only with --node N (a node that cannot be replaced "
              "where it ran); a preempted instance is recovered where its job's decider "
              "places it", file=sys.stderr)
        return 2
    launcher = launcher_class(args.base_dir)
    named = [i for i in launcher.instances() if i.id == args.job]
    if named and not args.job.isdigit():  # an instance's name: that instance
        if named[0].state != "running":
            print(f"instance {args.job} of job {named[0].job_id}: it is {named[0].state}: "
                  "nothing to take away", file=sys.stderr)
            return 1
        job_id, live = named[0].job_id, named
    elif args.job.isdigit():
        job_id = int(args.job)
        live = [i for i in launcher.instances(job_id) if i.state == "running"]
    else:  # a name: the running instances of the job of that name (one live job a name)
        running = [i for i in launcher.instances() if i.state == "running"]
        names = {i.id: launcher.job_name(i.id) for i in running}
        live = [i for i in running if names[i.id] == args.job]
        if not live:
            print(_none_running(launcher, args.job, sorted({n for n in names.values() if n})),
                  file=sys.stderr)
            return 1
        job_id = live[-1].job_id
    if not live:
        print(f"job {job_id}: no running instance under {launcher.base_dir}",
              file=sys.stderr)
        return 1
    if args.node is not None and args.action == "preempt":
        launcher.preempt_node(live[-1].id, args.node, capacity=not args.no_capacity)
        print(f"preempt: node {args.node} of instance {live[-1].id} of job {job_id}")
        return 0
    getattr(launcher, args.action)(live[-1].id)
    print(f"{args.action}: instance {live[-1].id} of job {job_id}")
    return 0


def _none_running(launcher: Any, name: str, running: list[str]) -> str:
    """Why no instance of the job named `name` can be taken: it has none running (it ended
    or was stopped: nothing to preempt), or no job has that name (the running jobs' names
    close to it)."""
    ended = [i for i in launcher.instances() if i.state != "running"
             and launcher.job_name(i.id) == name]
    if ended:
        job_id = ended[-1].job_id
        return (f"job {job_id} ({name}): no instance of it runs (its last is "
                f"{ended[-1].state}): nothing to preempt; `costsched status {name}` says "
                "where it stands")
    return (f"job {name!r}: no running instance of a job of that name under "
            f"{launcher.base_dir}" + did_you_mean(name, running))
