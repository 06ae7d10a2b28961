"""A new store made at once at the newest revision: its tables created from the schema
(`costsched.store.schema`), its one identity row written, and the newest revision stamped,
as running every revision would leave it, without loading Alembic (its import and the
revisions run: about a fifth of a second of CPU in a command that opens a store not made
yet, the bundled prices' store in memory included). The test of this module holds the two
to the same tables, column by column."""

from __future__ import annotations

import secrets

from sqlalchemy import (
    Column,
    Connection,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    insert,
    inspect,
    text,
)

from costsched.store_revision import VERSION_TABLE, newest_revision


def made_new(conn: Connection, lock_key: int) -> bool:
    """Make the store's tables at the newest revision when the database has none of them
    and no revision (True); False, touching nothing, when it has (a store the revisions
    bring up to date) or the newest revision cannot be told without Alembic. Run in the
    caller's write (`database.write`: SQLite's write lock), under the upgrades' advisory
    lock `lock_key` on PostgreSQL: of two processes making one store at once, the second
    finds it made."""
    from costsched.store.schema import metadata

    newest = newest_revision()
    if newest is None:
        return False
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": lock_key})
    present = set(inspect(conn).get_table_names())
    if VERSION_TABLE in present or present & set(metadata.tables):
        return False
    metadata.create_all(conn, checkfirst=False)  # none of them is there: no look at each
    _stamp(conn, newest)
    return True


def _stamp(conn: Connection, revision: str) -> None:
    """The identity row revision 0016 writes, and Alembic's version table as Alembic makes
    it, holding `revision`."""
    from costsched.store.schema import SCOPE_BYTES, store_identity

    conn.execute(insert(store_identity).values(id=1, scope=secrets.token_hex(SCOPE_BYTES)))
    version = Table(VERSION_TABLE, MetaData(),
                    Column("version_num", String(32), nullable=False),
                    PrimaryKeyConstraint("version_num", name=f"{VERSION_TABLE}_pkc"))
    version.create(conn)
    conn.execute(insert(version).values(version_num=revision))
