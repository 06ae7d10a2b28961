"""Read each cloud's quotas (its reader, side by side) and store what was read, with how
each cloud's reading went: `collect` and the daemon's collection call it after the prices,
`costsched quotas --refresh` alone.

A cloud whose quotas cannot be read (no SDK, no credentials, a permission missing) is
stored as such, in one line naming what is missing: its quotas read before keep their age,
and plans treat its offerings as fitting (and say so once).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

from costsched.store import PriceStore
from costsched.vocabulary import unprefixed
from price_collectors.base import one_line
from price_collectors.quota_reading import QuotasUnreadable, reading_frame


@dataclass
class QuotasRead:
    """How one cloud's reading went: quotas stored, and what was not read (one line)."""

    read: int = 0
    error: str = ""
    fix: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _aws(gcp_project: str | None) -> Any:
    from price_collectors.quotas_aws import AwsQuotaReader

    return AwsQuotaReader()


def _gcp(gcp_project: str | None) -> Any:
    from price_collectors.quotas_gcp import GcpQuotaReader

    return GcpQuotaReader(project=gcp_project)


def _azure(gcp_project: str | None) -> Any:
    from price_collectors.quotas_azure import AzureQuotaReader

    return AzureQuotaReader()


# cloud -> a function making its reader (with its SDK's default clients; it may raise
# QuotasUnreadable).
READERS: dict[str, Callable[[str | None], Any]] = {"aws": _aws, "gcp": _gcp,
                                                    "azure": _azure}


def read_quotas(store: PriceStore, regions: Mapping[str, Sequence[str]], *,
                gcp_project: str | None = None, readers: Mapping[str, Any] | None = None,
                at: datetime | None = None) -> dict[str, QuotasRead]:
    """Read the quotas of each cloud of `regions` (cloud -> its regions, [] = all) and store
    them, each cloud's in its own transaction. `readers`: cloud -> a reader (default the
    clouds' own, READERS). A cloud without a reader is left out."""
    when = at or datetime.now(timezone.utc)
    clouds = [c for c in regions if (readers is not None and c in readers) or
              (readers is None and c in READERS)]

    def one(cloud: str) -> QuotasRead:
        try:
            reader = readers[cloud] if readers is not None else READERS[cloud](gcp_project)
            reading = reader.read(list(regions[cloud]))
        except QuotasUnreadable as exc:
            store.quotas.record(cloud, reading_frame([]), at=when, error=str(exc),
                                fix=exc.fix)
            return QuotasRead(0, str(exc), exc.fix)
        except Exception as exc:  # noqa: BLE001 - one line per cloud, the others go on
            error = f"{cloud}: quotas not read: {unprefixed(one_line(exc), cloud)}"
            store.quotas.record(cloud, reading_frame([]), at=when, error=error)
            return QuotasRead(0, error)
        count = store.quotas.record(cloud, reading.rows, at=when, account=reading.account,
                                    error=reading.error, fix=reading.fix)
        return QuotasRead(count, reading.error, reading.fix)

    with ThreadPoolExecutor(max_workers=max(1, len(clouds)),
                            thread_name_prefix="quotas") as pool:
        return dict(zip(clouds, pool.map(one, clouds), strict=True))
