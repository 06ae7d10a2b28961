"""Whose spot prices are a cloud's spot market: the one rule every reader of prices applies
(`costsched.prices.prices_at`, which plan, launch, the decider, a set's "left out" check and
`gpus` read, and `costsched.bundled_prices.prices_at`, the quick path of `gpus`).

A cloud with a spot price in the store at or before the time asked (collected or imported)
takes the store's prices as its whole spot market: its bundled spot prices no newer than
the store's newest are left out (a collection reads every type of a cloud: what it did not
find is not offered). Prices imported as a partial update stand for no cloud's market: they
replace the bundled spot prices of their own places only. At any place, a bundled spot
price no newer than a stored one there is left out. A place is an offering's: its zone
too (`SPOT_OFFERING`), as billing prices it. A zone's price replaces that zone's and no
other: the bundled price of its region (no zone) is another offering's, the one a job
placed on the region runs on and is billed at, and stays beside it. The store's newest
spot price of each cloud is read over every spot offering of the store, never only those
a caller asks about: `plan` of a V100 task and `launch` of it must see one market
whatever else the store holds.

An import is read as a cloud's whole spot market only when it lists most of that cloud's
bundled spot offerings (`taken_whole`), or when told so (`prices import --whole`); else, or
when told so (`--partial`), as a partial update.

Standard library only: the quick path reads it without pandas or SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timezone

# The start of the source of prices imported as a partial update (`prices import
# --partial`): they stand for no cloud's whole spot market, and replace the bundled spot
# prices of their own places only (`bundled_place_holds`).
PARTIAL = "partial update: "

# The columns of a spot price's place, the one each stored or bundled price replaces the
# other's at (`bundled_place_holds`): the offering's, zone included ('' for a region's).
SPOT_OFFERING = ("cloud", "region", "zone", "instance_type")

# The share of a cloud's bundled spot offerings (places: cloud, region, type) an import must
# list to be read as that cloud's whole spot market when no reading is asked for: more than
# half. A hand-made file of a few quotes is then a partial update, and hides nothing.
WHOLE_SHARE = 0.5


def taken_whole(listed: int, bundled: int) -> bool:
    """Whether an import that lists `listed` of a cloud's `bundled` bundled spot offerings
    stands for its whole spot market when no reading is asked for: only if it lists more
    than WHOLE_SHARE of them (a cloud with none bundled: yes, there is nothing to hide)."""
    return bundled == 0 or listed > WHOLE_SHARE * bundled

# Per cloud, the newest stored spot price at or before :at (epoch seconds), over every spot
# offering, partial updates left out: one index seek per offering (prices' key is
# offering_id, effective_ts). Plain SQL that SQLite and PostgreSQL both run (the store
# through SQLAlchemy, `glance` through sqlite3).
NEWEST_SPOT_SQL = (
    "SELECT cloud, MAX(newest) FROM (SELECT o.cloud AS cloud, (SELECT MAX(p.effective_ts) "
    "FROM prices p WHERE p.offering_id = o.id AND p.effective_ts <= :at AND p.source NOT "
    f"LIKE '{PARTIAL}%') AS newest FROM offerings o WHERE o.market = 'spot') AS spot "
    "GROUP BY cloud"
)


def stored_spot_markets(rows: Iterable[tuple[str, int | float | None]]) -> dict[str, datetime]:
    """The clouds whose spot market the store holds, each with its newest spot price's time
    (aware UTC), from NEWEST_SPOT_SQL's rows (a cloud with no price by then is left out)."""
    return {str(cloud): datetime.fromtimestamp(int(ts), timezone.utc)
            for cloud, ts in rows if ts is not None}


def bundled_spot_holds(cloud: str, effective_at: datetime,
                       stored: Mapping[str, datetime]) -> bool:
    """Whether a bundled spot price of `cloud` dated `effective_at` is part of the market,
    given the store's spot markets (`stored_spot_markets`): yes unless the store holds
    `cloud`'s spot market with a price at least as new."""
    newest = stored.get(cloud)
    return newest is None or effective_at > newest


def bundled_place_holds(effective_at: datetime, stored_at: datetime | None) -> bool:
    """Whether a bundled spot price dated `effective_at` holds at its place (cloud, region,
    zone, type: `SPOT_OFFERING`), given the newest stored spot price there (`stored_at`,
    None for none): the newer of the two is the place's price."""
    return stored_at is None or effective_at > stored_at
