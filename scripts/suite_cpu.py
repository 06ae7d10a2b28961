"""The test suite's CPU per test file and per test: what makes the suite long on a machine
of few cores, where wall time only says how busy the machine was.

As a pytest plugin (loaded with -p, from this folder: no conftest changes), each pytest
process (each xdist worker) appends one line per test to OUT/rows-PID.jsonl: the CPU it
used from the test's setup to its teardown, its own and its reaped children's (the
`costsched` commands, agents, notebook kernels and browsers a test starts and waits for),
so that an interrupted run keeps what it measured; and at its end OUT/totals-PID.json
(collection included).

    PYTHONPATH=.:scripts SUITE_CPU_OUT=/tmp/cpu .venv/bin/pytest -p suite_cpu -n 3 \\
        --dist loadfile [TESTS...]
    python scripts/suite_cpu.py /tmp/cpu [--top 40]     # files and tests, most CPU first

A child that outlives its test is counted in the test during which it is reaped; a
process no test process reaps (a detached supervisor, the PostgreSQL server) is not.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import time
from pathlib import Path

_OUT = Path(os.environ.get("SUITE_CPU_OUT", "suite-cpu"))


def _cpu() -> tuple[float, float]:
    """(this process's CPU seconds, its reaped children's)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _write(name: str, text: str, mode: str = "a") -> None:
    _OUT.mkdir(parents=True, exist_ok=True)
    with open(_OUT / name, mode) as handle:
        handle.write(text)


try:
    import pytest
except ImportError:  # run as the report: no pytest needed
    pytest = None

if pytest is not None:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):  # noqa: ANN001, ANN201 - pytest's hook
        own, children = _cpu()
        began = time.monotonic()
        yield
        own_after, children_after = _cpu()
        row = [item.nodeid, own_after - own, children_after - children,
               time.monotonic() - began]
        _write(f"rows-{os.getpid()}.jsonl", json.dumps(row) + "\n")

    def pytest_unconfigure(config):  # noqa: ANN001, ANN201 - pytest's hook
        own, children = _cpu()
        _write(f"totals-{os.getpid()}.json", json.dumps({
            "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
            "own": own, "children": children}), mode="w")


def report(folder: Path, top: int) -> None:
    """The files and the tests of most CPU, and the processes' totals."""
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    tests = []
    for path in folder.glob("rows-*.jsonl"):
        for line in path.read_text().splitlines():
            nodeid, own, children, wall = json.loads(line)
            row = files[nodeid.split("::")[0]]
            row[0] += own
            row[1] += children
            row[2] += wall
            row[3] += 1
            tests.append((own + children, own, children, nodeid))
    workers = [json.loads(p.read_text()) for p in folder.glob("totals-*.json")]
    workers = [w for w in workers if w["worker"] != "main"] or workers  # main: its workers'
    in_tests = sum(t[0] for t in tests)
    print(f"{len(tests)} tests: {in_tests:.0f} s of CPU in tests", end="")
    if workers:
        whole = sum(w["own"] + w["children"] for w in workers)
        print(f"; {whole:.0f} s in the pytest processes whose totals were written "
              "(collection included)", end="")
    print(f"\n{'cpu':>7} {'own':>7} {'child':>7} {'wall':>7} {'tests':>5}  file")
    for name, (own, children, wall, n) in sorted(files.items(),
                                                  key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        print(f"{own + children:7.1f} {own:7.1f} {children:7.1f} {wall:7.1f} {n:5d}  {name}")
    print(f"\n{'cpu':>7} {'own':>7} {'child':>7}  test")
    for cpu, own, children, nodeid in sorted(tests, reverse=True)[:top]:
        print(f"{cpu:7.1f} {own:7.1f} {children:7.1f}  {nodeid}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    report(args.folder, args.top)
