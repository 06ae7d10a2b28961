"""`python -m launchers.local preempt|notice JOB_ID`: a cloud taking a local instance away,
as the demo and the docs simulate it."""

from __future__ import annotations

import sys
from pathlib import Path

from launchers.local import LocalLauncher


def main(argv: list[str] | None = None) -> int:
    """`python -m launchers.local preempt|notice JOB_ID [--base-dir DIR]`: simulate a cloud
    taking a job's running instance away, without or with a preemption notice."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m launchers.local",
                                     description=main.__doc__.splitlines()[0])
    parser.add_argument("action", choices=("preempt", "notice"))
    parser.add_argument("job_id", help="the job's id, as `costsched status` lists it")
    parser.add_argument("--base-dir", type=Path, default=None,
                        help="the local launcher's instances (default: $COSTSCHED_INSTANCES, "
                        "else instances in the user data directory, as costsched's own)")
    parser.add_argument("--node", type=int, default=None,
                        help="preempt: one node of a multi-node job (its rank)")
    parser.add_argument("--no-capacity", action="store_true",
                        help="preempt --node: and leave no capacity where it ran, so that "
                        "the job moves")
    args = parser.parse_args(argv)
    if not args.job_id.isdigit():
        print(f"job {args.job_id!r}: expected the job's id (a number, as `costsched status` "
              "lists it)", file=sys.stderr)
        return 2
    args.job_id = int(args.job_id)
    launcher = LocalLauncher(args.base_dir)
    live = [i for i in launcher.instances(args.job_id) if i.state == "running"]
    if not live:
        print(f"job {args.job_id}: no running instance under {launcher.base_dir}",
              file=sys.stderr)
        return 1
    if args.node is not None and args.action == "preempt":
        launcher.preempt_node(live[-1].id, args.node, capacity=not args.no_capacity)
        print(f"preempt: node {args.node} of instance {live[-1].id} of job {args.job_id}")
        return 0
    getattr(launcher, args.action)(live[-1].id)
    print(f"{args.action}: instance {live[-1].id} of job {args.job_id}")
    return 0
