"""PostgreSQL going away and coming back, through a TCP proxy the test closes and reopens:
commands fail with one line and work again on the same store; the daemon logs one line per
failure (no traceback) and runs its task again once the database is back. A server that
never answers and a statement that waits too long end at their timeouts."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Iterator
from datetime import datetime, timezone

import pytest
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import make_url
from typer.testing import CliRunner

from costsched.cli import app
from costsched.config import Config
from costsched.daemon import Daemon
from costsched.store import PriceStore
from costsched.store.database import StoreError
from tests.costsched.service.test_jobs import wait_for

SECRET_FREE = "***@"


class Proxy:
    """Forwards 127.0.0.1:port to a server; `close` drops every connection and refuses new
    ones, `reopen` accepts again on the same port; `freeze` silently drops whatever the
    connections open now carry (a network path that loses packets), new ones work."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self.sockets: list[socket.socket] = []
        self.frozen: set[socket.socket] = set()
        self.listener: socket.socket | None = None
        self.reopen()

    def reopen(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(32)
        self.port = listener.getsockname()[1]
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def close(self) -> None:
        assert self.listener is not None
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes accept(): it stops listening
        self.listener.close()
        self.listener = None
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self.sockets.clear()

    def freeze(self) -> None:
        self.frozen.update(self.sockets)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if source not in self.frozen:
                    sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


@pytest.fixture()
def proxied(fresh_url) -> Iterator[tuple[str, Proxy]]:
    """A new store's URL through a proxy, and the proxy."""
    url = make_url(fresh_url("postgresql"))
    proxy = Proxy(url.host or "127.0.0.1", url.port or 5432)
    via = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    PriceStore(via).dispose()  # the schema
    yield via, proxy
    if proxy.listener is not None:
        proxy.close()


def show(url: str):  # noqa: ANN201 - a typer Result
    return CliRunner().invoke(app, ["prices", "show", "--db", url, "--json"],
                              catch_exceptions=False)


def test_commands_fail_in_one_line_and_work_again(proxied: tuple[str, Proxy]) -> None:
    url, proxy = proxied
    store = PriceStore(url)
    assert store.count() == 0 and show(url).exit_code == 0
    proxy.close()
    result = show(url)
    assert result.exit_code == 75  # try again later
    [line] = result.stderr.strip().splitlines()
    # (named as the option that gave it)
    assert line.startswith("error: --db postgresql+psycopg://") and SECRET_FREE in line
    assert "connection refused" in line
    with pytest.raises(StoreError, match="the connection to the server was lost|closed"
                                         "|connection refused|ended the connection"):
        store.count()  # its pooled connection is gone too
    proxy.reopen()
    assert store.count() == 0  # the same store reconnects
    assert show(url).exit_code == 0
    store.dispose()


def test_the_daemon_retries_until_the_database_is_back(
    proxied: tuple[str, Proxy], caplog: pytest.LogCaptureFixture
) -> None:
    url, proxy = proxied
    store = PriceStore(url)
    daemon = Daemon(store, Config(), tasks=["replan"],
                    triggers={"replan": IntervalTrigger(seconds=1)})
    caplog.set_level(logging.INFO)
    daemon.start()
    try:
        wait_for(lambda: store.task_runs.last("replan", statuses=("ok",)), 120)
        proxy.close()
        down = datetime.now(timezone.utc)
        wait_for(lambda: _failures(caplog) >= 2, 120)
        proxy.reopen()
        wait_for(lambda: (run := store.task_runs.last("replan", statuses=("ok",)))
                 and run.started_at >= down.replace(microsecond=0), 120)
        records = list(caplog.records)  # up to here: stopping is not what is tested
    finally:
        daemon.stop()
        store.dispose()
    for record in records:
        assert record.exc_info is None and "\n" not in record.getMessage(), record
        assert "Traceback" not in record.getMessage()


def _failures(caplog: pytest.LogCaptureFixture) -> int:
    """Lines that report the database away: a task or a schedule read that failed."""
    return sum(1 for r in caplog.records if r.levelno >= logging.WARNING
               and "store postgresql" in r.getMessage())


def test_a_statement_waiting_on_a_lock_ends_at_the_statement_timeout(fresh_url) -> None:
    url = make_url(fresh_url("postgresql"))
    options = f"{url.query['options']} -c statement_timeout=1000"
    short = url.update_query_dict({"options": options}).render_as_string(hide_password=False)
    store = PriceStore(short)
    job_id = store.jobs.create("resnet", {"name": "resnet"}, 10.0, at=datetime.now(timezone.utc))
    holder = store.engine.connect()
    holder.exec_driver_sql(f"SELECT * FROM jobs WHERE id = {job_id} FOR UPDATE")
    done: list[BaseException] = []

    def move() -> None:
        try:
            store.jobs.transition(job_id, "stopped", at=datetime.now(timezone.utc))
        except BaseException as exc:  # noqa: BLE001 - what ended it is the result
            done.append(exc)

    thread = threading.Thread(target=move)
    thread.start()
    thread.join(120)  # a hang guard only
    holder.rollback()
    holder.close()
    assert done and isinstance(done[0], StoreError), done
    assert "statement timeout" in str(done[0])
    assert store.jobs.get(job_id).state == "pending"
    store.dispose()
