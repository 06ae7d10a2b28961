"""The notification hook: a command and/or a webhook told about migrations, recoveries,
failures and budget alarms, with one JSON document {"event", "at", ...details}.

A hook never stops the caller: a failure is one WARNING line and False in the result.
The document carries the details given, with URL passwords masked; never the database URL.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from costsched.config import Config, mask_url
from costsched.model import InvalidInput

EVENTS = ("migration", "recovery", "failure", "budget")
TIMEOUT_SECONDS = 10.0
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
    return NotifyResult(
        command=None if hooks.command is None else _run(hooks.command, body, event),
        webhook=None if hooks.webhook is None else _post(hooks.webhook, body, event),
    )


def document(config: Config, event: str, **details: Any) -> bytes:
    """The JSON sent: {"event", "at", ...details}, credentials masked, the DB URL left out."""
    at = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    doc = {"event": event, "at": at, **_clean(details, config.db)}
    return json.dumps(doc, default=_json_default).encode()


def _clean(value: Any, db: str | None) -> Any:
    if isinstance(value, dict):
        return {str(k): _clean(v, db) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v, db) for v in value]
    if isinstance(value, str):
        return "***" if db and value == db else mask_url(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


def _run(argv: list[str], body: bytes, event: str) -> bool:
    name = argv[0]
    try:
        done = subprocess.run(argv, input=body, capture_output=True, timeout=TIMEOUT_SECONDS,
                              check=False, env={**os.environ, "COSTSCHED_EVENT": event})
    except subprocess.TimeoutExpired:
        return _failed(f"command {name}", event, f"no exit within {TIMEOUT_SECONDS:g} s")
    except (OSError, ValueError) as exc:  # not found, not executable, a NUL in argv
        return _failed(f"command {name}", event, getattr(exc, "strerror", None) or str(exc))
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        said = f": {lines[-1][:200]}" if lines else ""
        return _failed(f"command {name}", event, f"exit status {done.returncode}{said}")
    return True


def _post(url: str, body: bytes, event: str) -> bool:
    target, auth = _split_credentials(url)
    headers = {"Content-Type": "application/json", "User-Agent": "costsched"}
    if auth:
        headers["Authorization"] = auth
    request = urllib.request.Request(target, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        return _failed(f"webhook {mask_url(url)}", event, f"HTTP {exc.code} {exc.reason}")
    except urllib.error.URLError as exc:
        return _failed(f"webhook {mask_url(url)}", event, str(exc.reason))
    except (OSError, ValueError) as exc:  # timeouts, resets, bad URLs
        return _failed(f"webhook {mask_url(url)}", event, str(exc) or type(exc).__name__)
    return True


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
    reason = " ".join(reason.split())
    _log.warning("notification hook %s failed for event %s: %s", hook, event, reason)
    return False
