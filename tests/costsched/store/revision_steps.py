"""Revision tests' shared step: a store upgraded to the newest revision, then taken back."""

from __future__ import annotations

from alembic import command

from costsched.store import PriceStore, database


def upgraded_then_downgraded(url: str, revision: str) -> PriceStore:
    """The store at `url` upgraded (by opening it), then downgraded to `revision`; open,
    not migrated again (the caller disposes of it)."""
    PriceStore(url).dispose()  # upgraded
    back = PriceStore(url, migrate=False)
    with back.engine.begin() as conn:
        cfg = database._config()
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)
    return back
