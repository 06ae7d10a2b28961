"""A store that `collect` or `quotas` would make: kept only when they stored something in
it. A collection that could read no cloud (no SDK, no credentials) leaves no empty store
behind, which a later command would take for one holding prices."""

from __future__ import annotations

from pathlib import Path

from costsched.cli.common import err_console, user_text

# SQLite's files beside the store's own while it is open (WAL) or writing (journal).
BESIDE = ("-wal", "-shm", "-journal")


class NewStore:
    """The store `db` names, when it does not exist yet (`path`; None when it does, or
    is a server's)."""

    def __init__(self, db: str | None) -> None:
        from costsched.service.store_files import missing_store

        self.path: Path | None = missing_store(db)

    def settle(self, stored: bool) -> bool:
        """Once the command is done with its store (closed): a new one it `stored` nothing
        in is removed (False); one it stored in is said made, on stderr (True). A store
        that existed before is left as it is (True)."""
        if self.path is None:
            return True
        if not stored:
            for path in (self.path, *(Path(f"{self.path}{end}") for end in BESIDE)):
                path.unlink(missing_ok=True)
            return False
        err_console.print(f"creating the store {user_text(self.path.resolve())}",
                          highlight=False, soft_wrap=True)
        return True

    def not_kept(self) -> str:
        """What replaces the store's path in a summary when it was not kept (plain text)."""
        return f"nothing to keep: no store made at {self.path}"
