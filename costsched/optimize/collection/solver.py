"""cvxpy, loaded on first use: importing it takes about a second, which every command
line call would pay though only collection plans need it."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any


def _lazy(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"{name} is not installed")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


cp = _lazy("cvxpy")

HIGHS = "HIGHS"  # cvxpy.HIGHS, the solver every collection problem uses


_banner_shown = False


def solve_quietly(program: Any, **options: Any) -> Any:
    """`program.solve(**options)` with nothing written to this process's stdout: HiGHS
    prints its banner on the first solver made in a process, from C, whatever its log
    options; that one is made here with the stdout file descriptor pointed at /dev/null,
    so that `--json` output and notebooks stay clean. The solver's log stays off (cvxpy's
    verbose=False)."""
    global _banner_shown
    if not _banner_shown:
        _banner_shown = True
        with _stdout_discarded():
            import highspy

            highspy.Highs()
    return program.solve(**options)


@contextmanager
def _stdout_discarded() -> Iterator[None]:
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
