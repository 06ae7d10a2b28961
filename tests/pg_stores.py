"""Migrated PostgreSQL stores for `any_store`, used again from one test to the next.

A new store of the test server is a schema created, migrated (the replayed migration of
tests/store_template.py: some 40 CREATE statements) and dropped at the end: about half a
second of the server's CPU and the worker's wait, for each of the suite's hundreds of
PostgreSQL stores. A store handed back here is emptied instead, and handed to the next test
of the process as a new one: every table's rows deleted, the rows the migration wrote (its
revision, the store's identity) written again with a scope of its own, and every sequence
set back where the migration left it: what a new store holds, in a few milliseconds.

A store whose schema the test changed (a table, column, index, constraint, default, view,
sequence, function or trigger added, altered or removed: its catalog's description differs
from the one taken when it was made) is dropped, as before, and so is every store left at
the end of the process. The store's own tests (tests/store_template.FROM_SCRATCH) migrate
from scratch: they get a new schema each time."""

from __future__ import annotations

import atexit
import secrets
import uuid
from dataclasses import dataclass, field
from urllib.parse import quote

from sqlalchemy import Connection, Engine, create_engine, text

from costsched.store.scope import SCOPE_BYTES

# What the test may not change in a store it hands back: the schema's objects, columns,
# defaults, constraints, indexes, triggers and functions, each as the catalog describes it.
_DESCRIBED = text("""
SELECT md5(coalesce(string_agg(item, E'\\n' ORDER BY item), '')) FROM (
  SELECT c.relname::text || ':' || c.relkind::text || ':' || coalesce(a.attname::text, '') || ':'
         || coalesce(format_type(a.atttypid, a.atttypmod), '') || ':'
         || coalesce(a.attnotnull::text, '') || ':'
         || coalesce(pg_get_expr(d.adbin, d.adrelid), '') AS item
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
  WHERE n.nspname = :schema
  UNION ALL
  SELECT 'constraint:' || con.conname::text || ':' || pg_get_constraintdef(con.oid)
  FROM pg_constraint con JOIN pg_namespace n ON n.oid = con.connamespace
  WHERE n.nspname = :schema
  UNION ALL
  SELECT 'index:' || indexdef FROM pg_indexes WHERE schemaname = :schema
  UNION ALL
  SELECT 'trigger:' || t.tgname::text || ':' || pg_get_triggerdef(t.oid)
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = :schema AND NOT t.tgisinternal
  UNION ALL
  SELECT 'function:' || p.oid::regprocedure::text || ':' || md5(coalesce(p.prosrc, ''))
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname = :schema
) described""")
_TABLES = text("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
               "WHERE n.nspname = :schema AND c.relkind IN ('r', 'p')")
# (child, parent) of each foreign key between two tables of the schema.
_REFERENCES = text("SELECT child.relname, parent.relname FROM pg_constraint con "
                   "JOIN pg_class child ON child.oid = con.conrelid "
                   "JOIN pg_class parent ON parent.oid = con.confrelid "
                   "JOIN pg_namespace n ON n.oid = con.connamespace "
                   "WHERE con.contype = 'f' AND n.nspname = :schema")
_SEQUENCES = text("SELECT sequencename FROM pg_sequences WHERE schemaname = :schema")


@dataclass
class _Made:
    """A store's schema as the migration left it."""

    schema: str
    described: str
    deletes: list[str]  # every table, children before their parents
    rows: list[tuple[str, list[str], list[tuple]]]  # (table, columns, rows) the migration wrote
    sequences: list[tuple[str, int, bool]]  # (name, last_value, is_called)


@dataclass
class StorePool:
    """The migrated schemas of this process's test server that no test holds now."""

    server: str
    free: list[_Made] = field(default_factory=list)
    _admin: Engine | None = None

    @property
    def admin(self) -> Engine:
        if self._admin is None:
            self._admin = create_engine(self.server)
            atexit.register(self.close)
        return self._admin

    def url(self, schema: str) -> str:
        sep = "&" if "?" in self.server else "?"
        return f"{self.server}{sep}options={quote(f'-csearch_path={schema}')}"

    def new_schema(self) -> str:
        """A new, empty schema (the caller migrates it: a PriceStore opened on its URL)."""
        schema = f"t_{uuid.uuid4().hex[:12]}"
        with self.admin.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
        return schema

    def drop(self, schema: str) -> None:
        with self.admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))

    def take(self) -> tuple[_Made | None, str]:
        """A free migrated store (its record and schema), or (None, a new empty schema)."""
        if self.free:
            made = self.free.pop()
            return made, made.schema
        return None, self.new_schema()

    def describe(self, schema: str) -> _Made:
        """The record of a schema just migrated."""
        with self.admin.begin() as conn:
            tables = [r[0] for r in conn.execute(_TABLES, {"schema": schema})]
            references = conn.execute(_REFERENCES, {"schema": schema}).all()
            rows = []
            for table in sorted(tables):
                result = conn.execute(text(f"SELECT * FROM {schema}.{table}"))
                held = [tuple(r) for r in result]
                if held:
                    rows.append((table, list(result.keys()), held))
            sequences = [(name, *conn.execute(text(
                f"SELECT last_value, is_called FROM {schema}.{name}")).one())
                for (name,) in conn.execute(_SEQUENCES, {"schema": schema})]
            described = conn.execute(_DESCRIBED, {"schema": schema}).scalar_one()
        return _Made(schema, described, _children_first(tables, references), rows, sequences)

    def give_back(self, made: _Made) -> None:
        """Empty the store as the migration left it and keep it; or drop it, when the test
        changed its schema."""
        with self.admin.begin() as conn:
            if conn.execute(_DESCRIBED, {"schema": made.schema}).scalar_one() != made.described:
                conn.execute(text(f"DROP SCHEMA {made.schema} CASCADE"))
                return
            _empty(conn, made)
        self.free.append(made)

    def close(self) -> None:
        if self._admin is None:
            return
        with self._admin.begin() as conn:
            for made in self.free:
                conn.execute(text(f"DROP SCHEMA IF EXISTS {made.schema} CASCADE"))
        self.free.clear()
        self._admin.dispose()
        self._admin = None


def _children_first(tables: list[str], references: list[tuple[str, str]]) -> list[str]:
    """The tables in an order that deletes each one's rows before those of a table it
    references."""
    parents = {t: {p for c, p in references if c == t and p != t} for t in tables}
    order: list[str] = []
    while parents:
        leaves = sorted(t for t in parents if not any(t in ps for ps in parents.values()))
        assert leaves, f"foreign keys in a cycle: {parents}"
        order += leaves
        for t in leaves:
            del parents[t]
    return order


def _empty(conn: Connection, made: _Made) -> None:
    schema = made.schema
    for table in made.deletes:
        conn.execute(text(f"DELETE FROM {schema}.{table}"))
    for table, columns, rows in made.rows:
        names = ", ".join(columns)
        marks = ", ".join(f":c{i}" for i in range(len(columns)))
        conn.execute(text(f"INSERT INTO {schema}.{table} ({names}) VALUES ({marks})"),
                     [{f"c{i}": v for i, v in enumerate(row)} for row in rows])
    conn.execute(text(f"UPDATE {schema}.store_identity SET scope = :scope WHERE id = 1"),
                 {"scope": secrets.token_hex(SCOPE_BYTES)})
    for name, last_value, is_called in made.sequences:
        conn.execute(text("SELECT setval(:name, :value, :called)"),
                     {"name": f"{schema}.{name}", "value": last_value, "called": is_called})
