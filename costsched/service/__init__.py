"""The operations users and programs perform, as plain functions over a price store.

The CLI parses arguments and renders what these return; the daemon, notebooks and
launchers call the same functions. Each takes the store first: a `PriceStore`, a
SQLAlchemy URL or SQLite path to open for the call, or None for the default store.
Nothing here prints; results are dataclasses and DataFrames, and bad values raise
`costsched.model.InvalidInput` with a message that names the value.

    from costsched import service
    result = service.plan("prices.sqlite", "examples/resnet50.yaml", at="2020-03-01")
    result.table                                  # one row per job: its best offering

Each name is imported from its module on first use, so that a light command (`costsched
status` on an empty store) does not pay for the planner, pandas and the solver.
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

# Public name -> the module of this package that defines it.
_MODULES = {
    "BacktestResult": "backtest", "backtest": "backtest", "default_first_start": "backtest",
    "CollectRequest": "collect", "collect_prices": "collect", "collect_request": "collect",
    "route_regions": "collect", "run_collection": "collect",
    "DeadlineBacktestResult": "deadline", "deadline_backtest": "deadline",
    "Decision": "decide", "decide": "decide",
    "PlanResult": "plan", "job_specs": "plan", "plan": "plan", "price_filters": "plan",
    "ImportResult": "prices", "export_prices": "prices", "import_prices": "prices",
    "price_history": "prices", "prices": "prices", "spot_availability": "prices",
    "StoreLike": "stores", "open_store": "stores", "using": "stores",
}

__all__ = ["BacktestResult", "CollectRequest", "DeadlineBacktestResult", "Decision",
           "ImportResult", "PlanResult", "StoreLike", "backtest", "collect_prices",
           "collect_request", "deadline_backtest", "decide", "default_first_start",
           "export_prices", "import_prices", "job_specs", "open_store", "plan",
           "price_filters", "price_history", "prices", "route_regions", "run_collection",
           "spot_availability", "using"]


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULES})


class _Package(ModuleType):
    """`plan`, `backtest`, `prices` and `decide` name both a module of this package and
    the function it defines. Importing the module would bind the package's name to the
    module (Python sets a package's attribute to each submodule it loads); the name stays
    the function, as `service.plan(...)` means. The modules are in sys.modules as usual."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, ModuleType) and _MODULES.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

if TYPE_CHECKING:  # the names as type checkers and editors see them
    from costsched.service.backtest import BacktestResult, backtest, default_first_start
    from costsched.service.collect import (
        CollectRequest,
        collect_prices,
        collect_request,
        route_regions,
        run_collection,
    )
    from costsched.service.deadline import DeadlineBacktestResult, deadline_backtest
    from costsched.service.decide import Decision, decide
    from costsched.service.plan import PlanResult, job_specs, plan, price_filters
    from costsched.service.prices import (
        ImportResult,
        export_prices,
        import_prices,
        price_history,
        prices,
        spot_availability,
    )
    from costsched.service.stores import StoreLike, open_store, using
