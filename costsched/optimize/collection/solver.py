"""cvxpy, loaded on first use: importing it takes about a second, which every command
line call would pay though only collection plans need it."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


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
