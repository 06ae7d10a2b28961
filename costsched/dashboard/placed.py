"""A job's placements as its page's table writes them, by `status`'s rule for the lines
under a job (`costsched.amounts.placement_times`): the hours, the hourly price charged and
the cost of each, such that the hours times the price, as written, read as the cost; the
same figures `status JOB` prints."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from costsched.amounts import (
    NOISE,
    block_hours,
    charged_hours,
    charging,
    placement_times,
    stored_price,
)
from costsched.report.html import format_cell


class Placed(NamedTuple):
    hours: str  # '0.0189'
    rate: str  # '$0.07962', a gang's '$0.6000 for 2 nodes', a re-priced one's with words
    usd: str  # '$0.00150'


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else math.nan


def spans(placements: list[dict], places: dict[str, int]) -> int:
    """The fewest decimals of a job's placements' hours, read together as `status` reads
    them (`amounts.block_hours`): from the store's (`places["hours"]`), those at which each
    placement's product reads as its amount (`amounts.placement_times`), one for all."""
    return block_hours([x for p in placements if (x := _product(p, places))], places["usd"],
                       places["hours"])


def _product(p: dict, places: dict[str, int]) -> tuple[float, float, float, bool] | None:
    """(hours, price, amount, running) of a placement its row writes as a product."""
    live = not p.get("end_at")
    hours, amount = _number(p.get("hours")), _number(p.get("usd"))
    price = _number(p.get("charged_usd_per_hour")) * max(int(p.get("nodes") or 1), 1)
    money = format_cell("usd", charging(amount, live) if math.isfinite(amount) else None,
                        places)
    if not (math.isfinite(price) and math.isfinite(hours) and money.startswith("$")
            and (live or abs(hours) >= NOISE)):
        return None
    return (hours, price, amount, live)


def rows(job: dict, places: dict[str, int], unit: str = "") -> list[Placed]:
    """Each of the job's placements (its status document's) as `status` bills it: its
    hours and its average price charged (all its nodes') at the decimals at which they
    multiply out to its cost at the store's scale (`places`: `render.job_places`), while
    it runs at those that do call after call (`amounts.steady_hours`); where no product
    reads as its cost (an average price of many digits, a charge under the scale's last
    decimal), its hours and the price in words (`costs.rate_words`), no product. `unit`:
    '/h' after each price."""
    from costsched.costs import rate_words

    placements = job.get("placements") or []
    least = spans(placements, places)
    return [_row(p, places, least, unit, rate_words(
        p.get("usd_per_hour"), p.get("charged_usd_per_hour"), p.get("nodes") or 1, unit))
        for p in placements]


def open_rate(job: dict, places: dict[str, int]) -> str | None:
    """The hourly price charged of the placement the job runs on now, as its row writes it
    (`rows`), '/h' after it; None where none is open."""
    found = [r for p, r in zip(job.get("placements") or [], rows(job, places, "/h"),
                               strict=True) if not p.get("end_at")]
    return found[-1].rate if found else None


def _row(p: dict, places: dict[str, int], least: int, unit: str, words: str) -> Placed:
    live = not p.get("end_at")
    hours, amount = _number(p.get("hours")), _number(p.get("usd"))
    # Its cost as it reads everywhere (an open one never zero): the figure of its leg.
    money = format_cell("usd", charging(amount, live) if math.isfinite(amount)
                        else p.get("usd"), places)
    nodes = max(int(p.get("nodes") or 1), 1)
    price = _number(p.get("charged_usd_per_hour")) * nodes
    found = None
    if math.isfinite(price) and math.isfinite(hours) and money.startswith("$") and (
            live or abs(hours) >= NOISE):
        found = placement_times(hours, price, amount, places["usd"], least, live)
    if found is None:
        return Placed(charged_hours(charging(hours, live) if "<" in money else hours, least),
                      words, money)
    span, rate, _ = found
    # The price charged as it multiplies (an average of more digits than a stored price's
    # at PRICE_MOST, where the words write it at MAX_DECIMALS); the rest of the words (its
    # nodes, the price when placed) kept.
    head = stored_price(price) + unit
    return Placed(span, rate + unit + words[len(head):] if words.startswith(head) else words,
                  money)
