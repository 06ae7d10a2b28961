"""costsched: train ML models cheaply on cloud GPUs (prices, plans, migration).

The Python API, for notebooks (the store is `db=`: a URL, a SQLite path, or None for the
default store):

    import costsched
    result = costsched.plan("examples/resnet50.yaml", at="2020-03-01", db="prices.sqlite")
    result.table                     # one row per job: its best offering, hours and cost

`costsched.replay(...)` backtests the policies, `costsched.prices_as_of(...)` gives the
prices as of a time; `costsched.launch(...)`, `status()`, `stop(job)`, `start(job)` and
`cost_report()` run and account for jobs as the commands of those names do (docs/python-api.md).
`costsched.service` has the same operations with the store first. The names load on first
use, so that `import costsched` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import Any

# Package name -> (module, name). `backtest`, `prices` and `report` are subpackages' names
# here, so their operations are `replay`, `prices_as_of` and `cost_report`.
_API = {
    "plan": ("costsched.service.api", "plan"),
    "replay": ("costsched.service.api", "backtest"),
    "prices_as_of": ("costsched.service.api", "prices"),
    "price_history": ("costsched.service.api", "price_history"),
    "import_prices": ("costsched.service.api", "import_prices"),
    "collect_prices": ("costsched.service.api", "collect_prices"),
    "budgets": ("costsched.service.api", "budgets"),
    "open_store": ("costsched.service", "open_store"),
    "status": ("costsched.api_jobs", "status"),
    "cost_report": ("costsched.api_jobs", "report"),
    "launch": ("costsched.api_jobs", "launch"),
    "stop": ("costsched.api_jobs", "stop"),
    "start": ("costsched.api_jobs", "start"),
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'costsched' has no attribute {name!r}")
    module, attr = _API[name]
    value = getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The API's names and the package's subpackages and modules loaded so far (`Any`,
    `import_module` and the like are how this file is written, not the API)."""
    loaded = {n for n, v in globals().items() if isinstance(v, ModuleType)}
    return sorted({*_API, *loaded})
