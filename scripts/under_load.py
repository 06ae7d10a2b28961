"""Run a command on a busy machine: CPU hogs (Python busy loops, one per core plus extra)
beside it for as long as it runs, then stopped. `make test-loaded` runs the test suite so:
no test may depend on the machine being quiet.

    python scripts/under_load.py [--hogs N] -- COMMAND [ARG...]

The hogs run at the command's own priority, so the command gets a fair share of the cores
and no more: about one core in (hogs + 1) per busy process of its own. The exit code is the
command's.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import subprocess
import sys


def spin() -> None:
    """A core's worth of work, for ever (stopped by SIGTERM)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the command's to handle
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def default_hogs() -> int:
    return (os.cpu_count() or 1) + 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hogs", type=int, default=default_hogs(),
                        help="busy loops beside the command (default: cores + 2)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("expected a command after --")
    if args.hogs < 0:
        parser.error(f"--hogs {args.hogs}: expected a whole number >= 0")
    hogs = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.hogs)]
    for hog in hogs:
        hog.start()
    print(f"under load: {len(hogs)} CPU hog(s) beside `{' '.join(command)}` on "
          f"{os.cpu_count()} core(s)", file=sys.stderr, flush=True)
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 130
    finally:
        for hog in hogs:
            hog.terminate()
        for hog in hogs:
            hog.join(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
