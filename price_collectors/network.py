"""Whether a call to a cloud failed because this machine cannot resolve the cloud's host
name (no network, or no DNS), in the words said once however many calls failed so: 'no
network: prices.azure.com does not resolve (DNS)'. The errors an exception wraps are walked
(`chain`); the host is read from the HTTP and SDK errors that name it, never guessed."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterable, Iterator
from urllib.parse import urlparse

DNS_WORDS = ("name or service not known", "temporary failure in name resolution",
             "nodename nor servname", "getaddrinfo failed", "name resolution",
             "no address associated", "failed to resolve", "nameresolutionerror",
             "dns resolution failed")
# Where an error's text names the host it could not resolve (urllib3, gRPC).
_HOST_SAID = re.compile(r"(?:Failed to resolve|resolution failed for|host=)\s*'?"
                        r"([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")


def chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, its causes and contexts, and the errors wrapped in its attributes (urllib3's
    `reason`, botocore's `error`), each once."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for nested in (current.__cause__, current.__context__, getattr(current, "reason", None),
                       getattr(current, "kwargs", {}).get("error")
                       if isinstance(getattr(current, "kwargs", None), dict) else None,
                       *[a for a in getattr(current, "args", ()) if isinstance(a, BaseException)]):
            if isinstance(nested, BaseException):
                todo.append(nested)


def is_dns(err: BaseException) -> bool:
    """Whether `err` itself is a failure to resolve a host name."""
    return isinstance(err, socket.gaierror) or any(w in str(err).lower() for w in DNS_WORDS)


def unresolved(exc: BaseException) -> str | None:
    """'no network: HOST does not resolve (DNS)' where `exc` comes of a host name that did
    not resolve; None otherwise."""
    errors = list(chain(exc))
    if not any(is_dns(e) for e in errors):
        return None
    host = next(filter(None, map(_host, errors)), None)
    return said(host or "the cloud API host")


def said(*hosts: str) -> str:
    """'no network: prices.azure.com does not resolve (DNS)', of one host or several."""
    verb = "does" if len(hosts) == 1 else "do"
    return f"no network: {', '.join(hosts)} {verb} not resolve (DNS)"


_SAID = re.compile(r"no network: (\S+) does not resolve \(DNS\)")


def offline(lines: Iterable[str]) -> str | None:
    """Where every line (a cloud's or a unit's failure) says a host did not resolve
    (`unresolved`), those hosts said once ('no network: a, b do not resolve (DNS)');
    None where one says something else, or there is none."""
    hosts = [_SAID.search(line) for line in lines]
    if not hosts or not all(hosts):
        return None
    return said(*dict.fromkeys(h.group(1) for h in hosts if h))


def _host(err: BaseException) -> str | None:
    """The host an error names: urllib3's (its pool's, its connection's), botocore's
    endpoint URL's, or one its text names."""
    for holder in (err, getattr(err, "pool", None), getattr(err, "conn", None)):
        host = getattr(holder, "_host", None) or getattr(holder, "host", None)
        if isinstance(host, str) and host:
            return host
    kwargs = getattr(err, "kwargs", None)
    if isinstance(kwargs, dict) and kwargs.get("endpoint_url"):
        return urlparse(str(kwargs["endpoint_url"])).hostname
    found = _HOST_SAID.search(str(err))
    return found.group(1) if found else None
