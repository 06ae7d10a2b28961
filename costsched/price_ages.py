"""How old the prices behind a figure are, by one rule and one threshold (the
configuration's `prices.stale_after`, default 7 days): `plan` and `migrate` name a price
older than it where they compare one, and `status` and `report` where the charges they
show were computed from one, with what gives the real figure. (The price frames' side of
the rule, with pandas, is `service.staleness`.)"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from costsched.amounts import age
from costsched.clouds.hints import collect_hint


# What brings newer prices than stale ones, said after the note of their age.
def newer(clouds: Sequence[str] = ()) -> str:
    """What brings newer prices than stale ones of `clouds` (their collect, after the
    install it needs here)."""
    return (f"{collect_hint(clouds)} or `costsched prices import` brings newer ones "
            "(prices.stale_after in the configuration)")


def stale_after_hours(config_path: str | None = None) -> float:
    """The configured `prices.stale_after`, in hours."""
    from costsched.config import load

    return float(load(config_path).config.prices.stale_after)


@dataclass(frozen=True)
class Stale:
    """The prices older than `stale_after_hours` among `total` used, of `clouds`."""

    count: int
    total: int
    oldest_at: datetime
    oldest_hours: float
    stale_after_hours: float
    clouds: tuple[str, ...] = ()

    def note(self) -> str:
        """'2 of the 5 prices are older than 7 days (the oldest from 2020-02-29, 2,094
        days old)'; 'all 3 prices are ...', 'both prices are ...', 'the price is older
        than 7 days (from 2020-02-29, ...)'."""
        if self.total == 1:
            which = "the price is"
        elif self.count == self.total == 2:
            which = "both prices are"
        elif self.count == self.total:
            which = f"all {self.total} prices are"
        else:
            which = (f"{self.count} of the {self.total} prices "
                     + ("is" if self.count == 1 else "are"))
        oldest = "from" if self.total == 1 else "the oldest from"
        return (f"{which} older than {_duration(self.stale_after_hours)} ({oldest} "
                f"{self.oldest_at:%Y-%m-%d}, {age(self.oldest_hours * 3600)} old)")


def stale_charges(priced: Iterable[tuple[tuple[object, ...], datetime | None, datetime]],
                  after_hours: float) -> Stale | None:
    """The stale prices among those charges were computed from (no pandas: `status`):
    each (the price's offering, its key: (cloud, region, ...), when it took effect, when
    it was charged up to), a price as old as the oldest time it was charged at; by the
    rule of `stale` (older than `after_hours`), None when none is."""
    ages: dict[tuple[tuple[object, ...], datetime], float] = {}
    for offering, since, at in priced:
        if since is None:
            continue
        hours = (at - since).total_seconds() / 3600
        ages[(offering, since)] = max(hours, ages.get((offering, since), hours))
    old = {k: v for k, v in ages.items() if v > after_hours}
    if not old:
        return None
    (_, oldest_at), hours = max(old.items(), key=lambda kv: kv[1])
    clouds = tuple(sorted({str(offering[0]) for offering, _ in old}))
    return Stale(len(old), len(ages), oldest_at, hours, after_hours, clouds)


def charged_note(old: Stale, figures: str) -> str:
    """The note under charged figures (`figures`: what they are, 'the costs above')
    computed from stale prices: how old, that they are estimates, and what gives the real
    figures (the clouds' bills, newer prices)."""
    return (f"note: {figures} are estimates from stored and list prices, not the clouds' "
            f"bills: {old.note()}; {collect_hint(old.clouds)} brings newer prices, and "
            "`costsched report --billed` sets the clouds' imported bills beside them")


def _duration(hours: float) -> str:
    """'7 days', '2.5 days', '36 h', '1.5 h': a whole number without its '.0'."""
    value, unit = (hours / 24, "days") if hours >= 48 else (hours, "h")
    return f"{value:,.0f} {unit}" if round(value, 1) == round(value) else f"{value:,.1f} {unit}"
