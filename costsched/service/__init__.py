"""The operations users and programs perform, as plain functions over a price store.

The CLI parses arguments and renders what these return; the daemon, notebooks and
launchers call the same functions. Each takes the store first: a `PriceStore`, a
SQLAlchemy URL or SQLite path to open for the call, or None for the default store.
Nothing here prints; results are dataclasses and DataFrames, and bad values raise
`costsched.model.InvalidInput` with a message that names the value.

    from costsched import service
    result = service.plan("prices.sqlite", "examples/resnet50.yaml", at="2020-03-01")
    result.table                                  # one row per job: its best offering
"""

from __future__ import annotations

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

__all__ = ["BacktestResult", "CollectRequest", "DeadlineBacktestResult", "Decision",
           "ImportResult", "PlanResult", "StoreLike", "backtest", "collect_prices",
           "collect_request", "deadline_backtest", "decide", "default_first_start",
           "export_prices", "import_prices", "job_specs", "open_store", "plan",
           "price_filters", "price_history", "prices", "route_regions", "run_collection",
           "spot_availability", "using"]
