"""One deadline job's market as its policy reads it: per zone, the spot and on-demand
offerings of one instance type, the arrays a deadline policy decides on, and why spot is
not available in a zone now (said in the decision's why: `decide.deadline_why`)."""

from __future__ import annotations

from dataclasses import dataclass

from costsched.lazy import pandas as pd
from costsched.policies.deadline.base import MarketNow


@dataclass(frozen=True)
class DeadlineMarket:
    """One job's market: per zone, the spot and on-demand offerings of one instance type
    (`offerings`: columns spot_<KEY>, od_<KEY>, their USD/h, the GPU), and the arrays a
    deadline policy reads (`market`, a batch of one)."""

    offerings: pd.DataFrame
    market: MarketNow
    # Per zone, why spot is not available there now ('' where it is, or is not offered;
    # () when not known).
    gone: tuple[str, ...] = ()

    def gone_at(self, zone: int) -> str:
        return self.gone[zone] if zone < len(self.gone) else ""
