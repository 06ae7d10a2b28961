"""Why a call to a cloud failed, in one line a user can act on: the network (DNS, no route, a
refused or silent connection, a proxy), or a credential file that cannot be read without
blocking. Never an exception's text that could hold a secret: causes are named from the
exception's type and the standard library's errors, and any text kept is redacted."""

from __future__ import annotations

import errno
import os
import socket
import stat

from costsched.redact import redact
from price_collectors.network import chain, is_dns

__all__ = ["NETWORK_FIX", "chain", "first_line", "network_cause", "unreadable_file"]

NETWORK_FIX = ("check this machine's network, DNS and proxy (HTTPS_PROXY), then run "
               "`costsched check` again")
_TIMEOUT_NAMES = ("timeout", "timedout", "readtimeout", "connecttimeout")


def network_cause(exc: BaseException, seconds: float) -> str | None:
    """What went wrong on the network, or None when the failure is not the network's."""
    for err in chain(exc):
        name = type(err).__name__.lower()
        text = str(err).lower()
        if is_dns(err):
            return "DNS: the cloud's host name cannot be resolved (no network or no DNS)"
        if isinstance(err, (TimeoutError, socket.timeout)) or any(
                t in name for t in _TIMEOUT_NAMES) or "timed out" in text:
            return f"no answer within {seconds:g} s (a firewall or proxy that drops, or no route)"
        if isinstance(err, ConnectionRefusedError):
            return "connection refused"
        if isinstance(err, OSError) and err.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH,
                                                      errno.ENETDOWN):
            return "network unreachable (no route to the cloud)"
        if "proxy" in name:
            return "the proxy refused or dropped the connection"
    for err in chain(exc):
        if isinstance(err, ConnectionError) or "connectionerror" in type(err).__name__.lower():
            return "cannot connect"
    return None


def unreadable_file(path: str) -> str | None:
    """Why a credential or config file cannot be read safely: not a regular file (a FIFO
    would block its reader for ever, a directory or device is not a file), or unreadable;
    None when it is absent or fine. The file is looked at, never opened."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror})"
    if stat.S_ISFIFO(info.st_mode):
        return "is a FIFO (a named pipe), not a file: reading it would block"
    if stat.S_ISDIR(info.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file (a socket or device)"
    if not os.access(path, os.R_OK):
        return "is not readable by this user"
    return None


def first_line(text: str, limit: int = 200) -> str:
    """The first line of a message, redacted and cut to `limit` characters."""
    line = next((part.strip() for part in str(text).splitlines() if part.strip()), "")
    line = redact(line)
    return line if len(line) <= limit else line[:limit - 3] + "..."
