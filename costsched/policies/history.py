"""A market view that also carries what the prices were before t: each offering's typical
price (`optimize.forecast`), for the policies that read history (`Policy.history_hours`).

A replay builds it from its trace's prices up to t, the live path from the store's
observations up to t; a view without it makes such a policy take today's prices as the
forecast.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from costsched.lazy import numpy as np
from costsched.policies.market import MarketView


@dataclass(frozen=True)
class HistoryView(MarketView):
    typical: np.ndarray | None = None  # per row: mean USD/hour over the window; NaN = none


def with_typical(view: MarketView, typical: np.ndarray) -> HistoryView:
    """`view` with each row's typical price (and nothing `MarketView.shared` kept from
    `view`: what policies derive depends on the typical prices)."""
    known = {f.name: getattr(view, f.name) for f in fields(MarketView)}
    known["derived"] = {}
    return HistoryView(**known, typical=np.asarray(typical, dtype=float))


def forecast_prices(view: MarketView) -> np.ndarray:
    """The price expected after the next period per row: the typical price where the view
    has one, else the price as of t."""
    typical = getattr(view, "typical", None)
    if typical is None:
        return view.prices
    return np.where(np.isnan(typical) | np.isnan(view.prices), view.prices, typical)
