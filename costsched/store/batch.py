"""Many small writes in one transaction: the job store's writes of a batch of job moves.

A pass that steps thousands of moves would otherwise commit each of their writes on its
own. Inside a `Batch`, the job, move and availability stores (`BatchStores`) write through
one connection: each write in a savepoint of its own (one that fails, a compare-and-set
lost to another writer for instance, undoes itself only, as its own transaction would
have), all committed together. Reads go through the same connection, so they see the
batch's writes.

What may be written in a batch is what may be lost with it: the writes of a move's step
that follow what its launcher did (the step is taken again, and the launch adopted by its
attempt tag), never the attempt a launch is tagged with (committed before the batch).
The transaction holds SQLite's write lock (PostgreSQL: the rows written) while it is
open: its owner commits it every `BATCH_SECONDS` or `BATCH_WRITES` steps (`full`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from sqlalchemy import Connection, Engine

from costsched.store.availability import AvailabilityStore
from costsched.store.jobs import JobStore
from costsched.store.moves import MoveStore

T = TypeVar("T")
BATCH_SECONDS = 0.25  # a batch open this long is committed at its next step's end
BATCH_WRITES = 500  # steps per batch at most


class Batch:
    """One write transaction of `engine`, begun now; what the stores take for an engine
    (`connect`, `begin`, and `write`'s `run_in_batch`)."""

    def __init__(self, engine: Engine) -> None:
        self.dialect, self.url = engine.dialect, engine.url
        self.conn = engine.connect()
        if engine.dialect.name == "sqlite":  # the write lock now, not at the first write
            self.conn.execution_options(sqlite_begin="IMMEDIATE")
        self.transaction = self.conn.begin()
        self.opened = time.monotonic()
        self.steps = 0

    def run_in_batch(self, work: Callable[[Connection], T]) -> T:
        """`database.write`'s work, in a savepoint of the batch's transaction."""
        with self.conn.begin_nested():
            return work(self.conn)

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        yield self.conn

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        with self.conn.begin_nested():
            yield self.conn

    def full(self) -> bool:
        """Whether the batch should be committed now (one more step counted)."""
        self.steps += 1
        return self.steps >= BATCH_WRITES or time.monotonic() - self.opened >= BATCH_SECONDS

    def commit(self) -> None:
        try:
            self.transaction.commit()
        finally:
            self.conn.close()

    def rollback(self) -> None:
        try:
            if self.transaction.is_active:
                self.transaction.rollback()
        finally:
            self.conn.close()


class BatchStores:
    """The stores a job move's steps write to (`jobs`, `moves`, `availability`), writing
    in `batch`."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch
        self.jobs = JobStore(batch)  # type: ignore[arg-type]
        self.moves = MoveStore(batch)  # type: ignore[arg-type]
        self.availability = AvailabilityStore(batch)  # type: ignore[arg-type]
