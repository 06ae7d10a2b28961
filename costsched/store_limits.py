"""How long the store is waited for: a busy store (another writer's lock) and a PostgreSQL
statement. The store takes them as arguments; the configuration's [store] section holds
them for a user (`costsched.config.StoreConfig`, whose defaults are these)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class StoreLimits(Protocol):
    """What the store reads of its limits (the configuration's [store] section is one)."""

    @property
    def busy_seconds(self) -> float: ...

    @property
    def statement_timeout_seconds(self) -> float: ...


@dataclass(frozen=True)
class Limits:
    """The store's limits as plain values: a store opened without any waits this long."""

    busy_seconds: float = 10.0  # a busy store is retried this long before the command exits 75
    statement_timeout_seconds: float = 60.0  # a PostgreSQL statement is cancelled after this


DEFAULT_LIMITS = Limits()
