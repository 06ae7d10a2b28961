"""The notification hook: a command and/or a webhook told about migrations, recoveries,
failures and budget alarms, with one JSON document {"event", "at", ...details}.

A hook never stops the caller: a failure is one WARNING line and False in the result.
Each hook is bounded: it has `notify.timeout_seconds` in all (not per read); a command's
output is discarded and its process group killed at the deadline; a webhook's response body
is never read. The document carries the details given with secrets masked
(`costsched.redact`); never the database URL.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import logging
import math
import os
import signal
import socket
import subprocess
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from costsched.config import Config
from costsched.model import InvalidInput
from costsched.redact import (
    MASK,
    is_secret_name,
    redact,
    remember,
    webhook_secrets,
)

EVENTS = ("migration", "recovery", "failure", "budget")
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class NotifyResult:
    """Whether each hook succeeded; None where it is not configured."""

    command: bool | None = None
    webhook: bool | None = None

    @property
    def ok(self) -> bool:
        return self.command is not False and self.webhook is not False


def notify(config: Config, event: str, **details: Any) -> NotifyResult:
    """Tell the configured hooks about `event`; never raises for a failing hook."""
    if event not in EVENTS:
        raise InvalidInput(f"event {event!r}: expected one of {', '.join(EVENTS)}")
    body = document(config, event, **details)
    hooks = config.notify
    seconds = hooks.timeout_seconds
    return NotifyResult(
        command=None if hooks.command is None else _run(hooks.command, body, event, seconds),
        webhook=None if hooks.webhook is None else _post(hooks.webhook, body, event, seconds),
    )


def document(config: Config, event: str, **details: Any) -> bytes:
    """The JSON sent: {"event", "at", ...details}, credentials masked, the DB URL left out."""
    at = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    doc = {"event": event, "at": at, **_clean(details, config.db)}
    return json.dumps(doc, default=_json_default).encode()


def _clean(value: Any, db: str | None) -> Any:
    if isinstance(value, dict):
        return {str(k): MASK if is_secret_name(str(k)) else _clean(v, db)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v, db) for v in value]
    if isinstance(value, str):
        return MASK if db and value == db else redact(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


def _run(argv: list[str], body: bytes, event: str, seconds: float) -> bool:
    """Run the command in a session of its own with `body` on stdin; its output is
    discarded (the last line of stderr kept for the warning). At the deadline, and when it
    ends, whatever is left of its process group is killed."""
    name = redact(argv[0])
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True,
                                env={**os.environ, "COSTSCHED_EVENT": event})
    except (OSError, ValueError) as exc:  # not found, not executable, a NUL in argv
        return _failed(f"command {name}", event, getattr(exc, "strerror", None) or str(exc))
    tail = _Tail()
    feeder = threading.Thread(target=_feed, args=(proc.stdin, body), daemon=True)
    reader = threading.Thread(target=tail.drain, args=(proc.stderr,), daemon=True)
    feeder.start()
    reader.start()
    try:
        code: int | None = proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        _kill_group(proc)
    reader.join(1.0)
    if code is None:
        return _failed(f"command {name}", event, f"no exit within {seconds:g} s (killed)")
    if code != 0:
        said = f": {tail.last_line()[:200]}" if tail.last_line() else ""
        return _failed(f"command {name}", event, f"exit status {code}{said}")
    return True


def _feed(stdin: IO[bytes], body: bytes) -> None:
    try:
        with stdin:
            stdin.write(body)
    except OSError:  # the command did not read its input
        pass


class _Tail:
    """The last bytes a stream wrote, read to its end in bounded memory."""

    KEEP = 4096

    def __init__(self) -> None:
        self.data = b""

    def drain(self, stream: IO[bytes]) -> None:
        with stream:
            while chunk := stream.read1(65536):  # type: ignore[attr-defined]
                self.data = (self.data + chunk)[-self.KEEP:]

    def last_line(self) -> str:
        lines = self.data.decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the command's process group (it and anything it started), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _post(url: str, body: bytes, event: str, seconds: float) -> bool:
    """POST `body`; the whole exchange (connect, send, the status line) within `seconds`,
    the response's body never read."""
    remember(webhook_secrets(url))  # its path is its credential, in every message after
    hook = f"webhook {redact(url)}"
    target, auth = _split_credentials(url)
    parts = urlsplit(target)
    headers = {"Content-Type": "application/json", "User-Agent": "costsched"}
    if auth:
        headers["Authorization"] = auth
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    try:
        conn = kind(parts.hostname or "", parts.port, timeout=seconds)
    except ValueError as exc:  # a bad port
        return _failed(hook, event, str(exc))
    path = urlunsplit(("", "", parts.path or "/", parts.query, ""))
    outcome: list[tuple[int, str] | BaseException] = []

    def exchange() -> None:
        try:
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            outcome.append((response.status, response.reason))
        except (OSError, http.client.HTTPException, ValueError) as exc:
            outcome.append(exc)
        finally:
            conn.close()

    worker = threading.Thread(target=exchange, daemon=True, name="costsched-webhook")
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        _abort(conn)
        worker.join(1.0)
        return _failed(hook, event, f"no answer within {seconds:g} s")
    result = outcome[0] if outcome else RuntimeError("no result")
    if isinstance(result, BaseException):
        return _failed(hook, event, str(result) or type(result).__name__)
    status, reason = result
    if status >= 400:
        return _failed(hook, event, f"HTTP {status} {reason}")
    return True


def _abort(conn: http.client.HTTPConnection) -> None:
    """End a connection another thread is blocked on."""
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _split_credentials(url: str) -> tuple[str, str | None]:
    """The URL without user:password@, and the Basic authorization header for them."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
    return urlunsplit(parts._replace(netloc=host)), f"Basic {token}"


def _failed(hook: str, event: str, reason: str) -> bool:
    reason = redact(" ".join(reason.split()))
    _log.warning("notification hook %s failed for event %s: %s", hook, event, reason)
    return False
