"""A PostgreSQL server that completes the login and then never answers: every command ends at
the statement timeout and a grace with one line and exit 75 (no hang), naming the store with
its password masked; a connection whose network path goes silent fails its statement or
commit at the same deadline, and the pool replaces a pooled one that no longer answers."""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from costsched.config import StoreConfig
from costsched.store import PriceStore
from costsched.store.database import StoreUnavailable
from tests.reliability.test_db_outage import Proxy, proxied  # noqa: F401 - a fixture

TIMEOUT_S = 0.5  # store.statement_timeout_seconds in these tests
DEADLINE_S = TIMEOUT_S + 2.0  # and the watchdog's grace
LIMITS = StoreConfig(statement_timeout_seconds=TIMEOUT_S)
GUARD_S = 120  # a hang guard only: without the watchdog the command never ends
COSTSCHED = str(Path(sys.executable).with_name("costsched"))  # the installed command
_SSL_REQUEST, _GSS_REQUEST = 80877103, 80877104


class SilentServer:
    """A loopback server speaking just enough of PostgreSQL's protocol (v3) to complete a
    login (no SSL, authentication ok, the usual parameters, ready), then reading queries and
    never answering. `first_query`: when the first one arrived (time.monotonic)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.clients: list[socket.socket] = []
        self.first_query: float | None = None
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        for client in self.clients:
            client.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.clients.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with contextlib.suppress(OSError, EOFError):
            while True:  # SSL and GSS encryption requests are declined ('N')
                length, code = struct.unpack("!ii", _read(client, 8))
                _read(client, length - 8)
                if code not in (_SSL_REQUEST, _GSS_REQUEST):
                    break  # the startup message
                client.sendall(b"N")
            reply = _message(b"R", struct.pack("!i", 0))  # AuthenticationOk
            for name, value in (("server_version", "16.4"), ("server_encoding", "UTF8"),
                                ("client_encoding", "UTF8"), ("DateStyle", "ISO, MDY"),
                                ("integer_datetimes", "on"),
                                ("standard_conforming_strings", "on")):
                reply += _message(b"S", f"{name}\0{value}\0".encode())
            reply += _message(b"K", struct.pack("!ii", 4242, 1)) + _message(b"Z", b"I")
            client.sendall(reply)
            while client.recv(65536):
                if self.first_query is None:
                    self.first_query = time.monotonic()


def _read(client: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        if not (chunk := client.recv(size - len(data))):
            raise EOFError
        data += chunk
    return data


def _message(kind: bytes, payload: bytes) -> bytes:
    return kind + struct.pack("!i", len(payload) + 4) + payload


@pytest.fixture()
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


def _url(server: SilentServer) -> str:
    return f"postgresql+psycopg://u:secret@127.0.0.1:{server.port}/x"


@pytest.mark.parametrize("command", [["status"], ["daemon", "--once"]])
def test_a_command_ends_with_exit_75_when_the_server_never_answers(
    silent: SilentServer, tmp_path: Path, command: list[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[store]\nstatement_timeout_seconds = {TIMEOUT_S}\n")
    env = {**os.environ, "COSTSCHED_CONFIG": str(config)}
    if command == ["status"]:
        command = [*command, "--db", _url(silent)]
    else:  # the daemon's store is the environment's
        env["COSTSCHED_DB"] = _url(silent)
    done = subprocess.run([COSTSCHED, *command], env=env, capture_output=True, text=True,
                          timeout=GUARD_S)
    ended = time.monotonic()
    assert silent.first_query is not None  # it logged in and sent a query
    # One wait, at the configured limits: `status`'s look for a store on the server (it
    # never creates one) gives up at the same deadline, and says so; it is not waited out
    # at the driver's default before the store is opened and waited on again.
    assert len(silent.clients) == 1
    # Ended at the deadline (the line below is the watchdog's), not at the guard's timeout;
    # how soon after it the process exits depends on how busy the machine is.
    assert DEADLINE_S - 0.2 <= ended - silent.first_query < GUARD_S
    assert done.returncode == 75, done.stderr
    [line] = done.stderr.strip().splitlines()
    named = "--db" if command[0] == "status" else "store"  # `status`: the option that gave it
    assert line.startswith(f"error: {named} postgresql+psycopg://u:***@127.0.0.1:{silent.port}/x:")
    assert f"did not answer within {DEADLINE_S:g} s" in line
    assert f"store.statement_timeout_seconds {TIMEOUT_S:g} s" in line
    assert "secret" not in done.stdout + done.stderr


def _guarded(work: Callable[[], object]) -> tuple[object, float]:
    """What `work()` returned or raised, and the seconds it took; run in a thread so that a
    hang fails the test at GUARD_S."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # noqa: BLE001 - what ended it is the result
            outcome.append(exc)

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(GUARD_S)
    assert not thread.is_alive(), f"still waiting for the server after {GUARD_S} s"
    return outcome[0], time.monotonic() - started


def _ends_at_the_deadline(work: Callable[[], object]) -> str:
    """The one-line error `work()` ends with, once the deadline has passed and soon after."""
    error, took = _guarded(work)
    assert isinstance(error, StoreUnavailable), error
    assert f"did not answer within {DEADLINE_S:g} s" in str(error)
    assert DEADLINE_S - 0.2 <= took < GUARD_S  # the deadline's doing, however busy
    return str(error)


def test_opening_a_store_on_a_server_that_never_answers_ends_at_the_deadline(
    silent: SilentServer,
) -> None:  # the dialect's first-connect queries
    error = _ends_at_the_deadline(lambda: PriceStore(_url(silent), limits=LIMITS))
    assert "secret" not in error and "u:***@" in error


def test_a_connection_that_stops_answering_ends_its_statement_and_commit(
    proxied: tuple[str, Proxy],  # noqa: F811 - the fixture
) -> None:
    url, proxy = proxied
    store = PriceStore(url, limits=LIMITS)
    reading, writing, pooled = (store.engine.connect() for _ in range(3))
    writing.begin()
    for conn in (reading, writing, pooled):
        conn.execute(text("SELECT 1"))
    pooled.close()  # back in the pool, pinged before its next use
    proxy.freeze()  # the network path of the three goes silent; new connections work
    count, took = _guarded(store.count)
    assert count == 0  # the ping gave up on the silent one: a new connection
    assert DEADLINE_S - 0.2 <= took < GUARD_S  # the deadline's doing, however busy
    _ends_at_the_deadline(lambda: reading.execute(text("SELECT 1")))
    _ends_at_the_deadline(writing.commit)
    assert store.count() == 0
    for conn in (reading, writing):
        conn.close()
    store.dispose()
