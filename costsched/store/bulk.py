"""Writes of many rows in few statements, as each database does them fastest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, Table, bindparam, insert, text, update


def insert_rows(conn: Connection, table: Table, rows: Sequence[Mapping[str, object]]) -> None:
    """Insert `rows` (dicts of the same columns) into `table`: on PostgreSQL by COPY (a
    statement of thousands of parameters costs more to build and parse than the rows),
    elsewhere by one executemany."""
    if not rows:
        return
    if conn.dialect.name != "postgresql" or conn.connection.dbapi_connection is None:
        conn.execute(insert(table), list(rows))
        return
    columns = list(rows[0])
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        with cursor.copy(f"COPY {table.name} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row([row[c] for c in columns])
    finally:
        cursor.close()


def update_rows(conn: Connection, table: Table, rows: Sequence[Mapping[str, object]],
                where: Sequence[str], values: Sequence[str]) -> int:
    """Update many rows of `table` (each dict: its `where` columns' expected values under
    "was_<column>", and its `values` columns' new ones) in one statement on PostgreSQL
    (an UPDATE ... FROM unnest(arrays)), elsewhere one executemany; the rows changed (on
    a database whose executemany counts them; else len(rows))."""
    if not rows:
        return 0
    if conn.dialect.name != "postgresql":
        bind = {c: bindparam(f"b_{c}") for c in values}
        query = update(table).where(*(table.c[c] == bindparam(f"b_was_{c}") for c in where))
        result = conn.execute(query.values(**bind), [
            {f"b_{k}": v for k, v in row.items()} for row in rows])
        return int(result.rowcount) if conn.dialect.supports_sane_multi_rowcount \
            else len(rows)
    names = [f"was_{c}" for c in where] + list(values)
    columns = list(where) + list(values)
    arrays = ", ".join(f"CAST(:{n} AS {table.c[c].type.compile(dialect=conn.dialect)}[])"
                       for n, c in zip(names, columns, strict=True))
    sets = ", ".join(f"{c} = v.{c}" for c in values)
    matches = " AND ".join(f"{table.name}.{c} = v.was_{c}" for c in where)
    statement = text(f"UPDATE {table.name} SET {sets} FROM unnest({arrays}) "
                     f"AS v({', '.join(names)}) WHERE {matches}")
    return int(conn.execute(statement, {n: [row[n] for row in rows] for n in names}).rowcount)


def insert_with_ids(conn: Connection, table: Table, rows: Sequence[Mapping[str, object]]
                    ) -> list[int]:
    """Insert `rows` into `table` (whose key is its serial `id`): their ids, in order. On
    PostgreSQL the ids are drawn from the column's sequence first, and the rows copied in
    with them (`insert_rows`); elsewhere (or without a sequence of its own) one
    INSERT ... RETURNING."""
    if not rows:
        return []
    sequence = conn.execute(text(f"SELECT pg_get_serial_sequence('{table.name}', 'id')")
                            ).scalar() if conn.dialect.name == "postgresql" else None
    if sequence is None:  # (a table copied LIKE another owns no sequence of its own)
        return [int(i) for i in conn.execute(
            insert(table).returning(table.c.id, sort_by_parameter_order=True),
            list(rows)).scalars()]
    ids = sorted(int(i) for i in conn.execute(
        text("SELECT nextval(:sequence) FROM generate_series(1, :n)"),
        {"sequence": sequence, "n": len(rows)}).scalars())
    insert_rows(conn, table, [{"id": i, **row} for i, row in zip(ids, rows, strict=True)])
    return ids
