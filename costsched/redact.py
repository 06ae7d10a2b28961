"""The one rule for keeping secrets out of everything costsched prints, logs or sends.

A secret is masked as *** wherever it appears in text:

- in a URL: the password of its user info (a user name alone when it looks like a token),
  every query value, and path segments that look like tokens (long random-looking strings);
- after a name like a secret (token, secret, password, key, auth, credential, signature...):
  `token=...`, `--password ...`, `Authorization: ...`, and after `Bearer`/`Basic`;
- any value costsched was configured with that is a secret (`remember`): the database
  password, the webhook's path and query (a webhook's URL is its credential: Slack's
  /services/T.../B.../XXXX), a secret argument of the notify command;
- in any URL, every path segment after a hook's (`/hooks/`, `/webhooks/`, a hooks.* host).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

MASK = "***"
_SECRET_WORDS = (r"(?:token|secret|passw(?:or)?d|passwd|pwd|pass|api[_-]?key|apikey|key|"
                 r"auth|authorization|credentials?|signature|sig|bearer|cookie|session)")
# A name like a secret: the word itself, or a name ending with it (api_key, X-Auth-Token).
_SECRET_NAME = re.compile(rf"^(?:[\w.-]*[_.-])?{_SECRET_WORDS}$", re.IGNORECASE)
# A URL in text, without the punctuation that ends a sentence or a clause after it.
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`]*[^\s'\"<>`.,:;)\]}]")
# name=value or name: value after a secret-like name; the value up to a space or quote.
_ASSIGNED = re.compile(
    rf"(?P<name>\b(?:[\w.-]*[_.-])?{_SECRET_WORDS})(?P<sep>\s*[=:]\s*|\s+(?=[\"']))"
    r"(?!(?:bearer|basic)\s)(?P<value>\"[^\"]*\"|'[^']*'|[^\s,;&\"']+)", re.IGNORECASE)
_SCHEME_TOKEN = re.compile(r"\b(?P<scheme>bearer|basic|token)\s+(?P<value>[\w.~+/=-]{6,})",
                           re.IGNORECASE)
_WORD_PARTS = re.compile(r"[-_.~]")
_MIN_REMEMBERED = 4  # shorter configured values would mask ordinary words

_remembered: set[str] = set()


def remember(secrets: Iterable[str]) -> None:
    """Mask these values from now on wherever they appear (values configured as secrets)."""
    _remembered.update(s for s in secrets if s and len(s) >= _MIN_REMEMBERED and s != MASK)


def remembered() -> frozenset[str]:
    """The values `remember`ed: the secrets costsched knows in this process."""
    return frozenset(_remembered)


def remember_given(names: Iterable[str], env: Mapping[str, str] | None = None) -> None:
    """Mask from now on the values `env` (default: this process's environment) gives these
    names: a job's --secret names, whose values are never stored, as its launch was given
    them from the same environment."""
    env = os.environ if env is None else env
    remember(env[name] for name in names if name in env)


def remembered_masked(text: str) -> str:
    """`text` with only the values `remember`ed masked (a job's own output: its other words
    are its own)."""
    return _replace_remembered(text) if text else text


def looks_like_token(text: str) -> bool:
    """A long random-looking string: a part (between - _ . ~) of 24 characters or more, or of
    16 or more mixing letters and digits."""
    for part in _WORD_PARTS.split(text):
        if len(part) >= 24 and part.isalnum():
            return True
        if (len(part) >= 16 and part.isalnum() and any(c.isdigit() for c in part)
                and any(c.isalpha() for c in part)):
            return True
    return False


def is_secret_name(name: str) -> bool:
    """Whether a field, header, argument or variable name is one a secret goes by."""
    return bool(_SECRET_NAME.match(name.strip().lstrip("-")))


def redact_url(url: str) -> str:
    """`url` with its password, query values and token-like path segments masked."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    # The user info ends at the last @ before the host: a password may hold / ? # (then
    # unencoded, as people paste them) but not @.
    head, at, tail = _split_userinfo(rest)
    if at:
        user, colon, _password = head.partition(":")
        if colon:
            head = f"{user}:{MASK}"
        elif looks_like_token(user):
            head = MASK
    authority, slash, path_etc = tail.partition("/")
    if not slash:  # no path: the query may follow the host directly
        authority, qmark, query = tail.partition("?")
        return f"{scheme}://{head}{at}{authority}{qmark}{_mask_query(query)}"
    path, qmark, query = path_etc.partition("?")
    query, hash_, fragment = query.partition("#") if qmark else ("", "", "")
    if not qmark:
        path, hash_, fragment = path.partition("#")
    segments = _mask_segments(authority, path.split("/"))
    fragment = MASK if fragment and looks_like_token(fragment) else fragment
    return (f"{scheme}://{head}{at}{authority}/{'/'.join(segments)}{qmark}"
            f"{_mask_query(query)}{hash_}{fragment}")


# A webhook's URL is its credential: what follows these path segments (or the whole path
# on a hooks.* host: Slack's /services/T.../B.../XXXX) is masked, however short.
_HOOK_SEGMENTS = {"hook", "hooks", "webhook", "webhooks", "incomingwebhook", "callback",
                  "callbacks", "trigger", "triggers", "catch"}
_HOOK_HOSTS = ("hooks.", "hook.", "webhook.", "webhooks.")


def _mask_segments(authority: str, segments: list[str]) -> list[str]:
    """Path segments (the first after the host first) with token-like ones masked, and
    every one after a hook's: after the first on a hooks.* host, after /hooks/ elsewhere."""
    host = authority.rpartition("@")[2].lower()
    masking_from = 1 if host.startswith(_HOOK_HOSTS) else None
    out = []
    for i, segment in enumerate(segments):
        hidden = masking_from is not None and i >= masking_from
        out.append(MASK if segment and (hidden or looks_like_token(segment)) else segment)
        if masking_from is None and segment.lower() in _HOOK_SEGMENTS:
            masking_from = i + 1
    return out


def webhook_secrets(url: str) -> list[str]:
    """What to `remember` of a webhook's URL: the URL's own secrets, and its path after the
    host when it can carry a credential (more than one segment, or a token-like or long
    numbered one)."""
    found = secrets_in_url(url)
    _scheme, sep, rest = url.partition("://")
    if not sep:
        return found
    tail = _split_userinfo(rest)[2]
    path = urlsplit(f"x://{tail}").path.strip("/")
    # Not a single plain word (/costsched): remembered, it would be masked in every text.
    if path and ("/" in path or looks_like_token(path)
                 or (len(path) >= 8 and any(c.isdigit() for c in path))):
        found.append(path)
    return found


def _split_userinfo(rest: str) -> tuple[str, str, str]:
    """(user info, "@" or "", the rest) of the part of a URL after "scheme://"."""
    first_slash = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0),
                      default=len(rest))
    at = rest.find("@")
    if at < 0:
        return "", "", rest
    if at > first_slash:
        # An @ past the host: user info only when a colon before it is not a port's
        # (user:pa/ss@host, a password with an unencoded /); else an @ in the path or query.
        _host, colon, after = rest[:first_slash].partition(":")
        if not colon or not after or after.isdigit():
            return "", "", rest
    # user:pa/ss@host: the password runs to the @ after the first colon.
    return rest[:at], "@", rest[at + 1:]


def _mask_query(query: str) -> str:
    if not query:
        return query
    pairs = []
    for part in query.split("&"):
        name, eq, _value = part.partition("=")
        pairs.append(f"{name}={MASK}" if eq else (MASK if looks_like_token(name) else name))
    return "&".join(pairs)


def redact(text: str) -> str:
    """`text` with every secret the rule knows masked."""
    if not text:
        return text
    out = _URL.sub(lambda m: redact_url(m.group()), text)
    out = _SCHEME_TOKEN.sub(lambda m: f"{m['scheme']} {MASK}", out)
    out = _ASSIGNED.sub(_mask_assigned, out)
    return _replace_remembered(out)


def _replace_remembered(text: str) -> str:
    for secret in sorted(_remembered, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _mask_assigned(match: re.Match[str]) -> str:
    value = match["value"]
    if value.strip("\"'").startswith(MASK):  # masked already (a URL's password)
        return match.group()
    quote = value[0] if value[:1] in "\"'" else ""
    return f"{match['name']}{match['sep']}{quote}{MASK}{quote}"


def redact_argv(argv: Iterable[str]) -> list[str]:
    """A command's arguments with secrets masked: the value after a flag named like a secret
    (--token X), and whatever `redact` finds in each argument."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(MASK)
            hide_next = False
            continue
        if arg.startswith("-") and "=" not in arg and is_secret_name(arg):
            hide_next = True
        out.append(redact(arg))
    return out


def redact_value(value: Any, name: str = "") -> Any:
    """A JSON-like value with secrets masked: strings by `redact`, and the whole value of a
    key named like a secret."""
    if isinstance(value, dict):
        return {k: redact_value(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return redact_argv(value) if all(isinstance(v, str) for v in value) else \
            [redact_value(v) for v in value]
    if name and is_secret_name(name.rsplit(".", 1)[-1]) and value not in (None, ""):
        return MASK
    if isinstance(value, str):
        return redact(value)
    return value


def secrets_in_url(url: str) -> list[str]:
    """The secret parts of a URL as written: its password, query values, token-like path
    segments (to `remember`)."""
    found: list[str] = []
    _scheme, sep, rest = url.partition("://")
    if not sep:
        return found
    head, at, tail = _split_userinfo(rest)
    user, _, password = head.partition(":") if at else ("", "", "")
    try:
        parts = urlsplit(f"x://{tail}") if tail else None
    except ValueError:  # not a URL ('u@[bad/db'): the store says so; its password still found
        parts = None
    if parts is not None:
        found.extend(v for _k, v in parse_qsl(parts.query, keep_blank_values=False))
        found.extend(s for s in parts.path.split("/") if looks_like_token(s))
    # A password that is also the user, host or database name is shown as those anyway;
    # masking it everywhere would hide that word in every message.
    if password and password != user and password not in tail.split("?")[0]:
        found.append(password)
    return found


def secrets_in_argv(argv: Iterable[str]) -> list[str]:
    """The secret arguments of a command: those `redact_argv` masks whole."""
    args = list(argv)
    masked = redact_argv(args)
    return [a for a, m in zip(args, masked, strict=True) if m == MASK]


__all__ = ["MASK", "is_secret_name", "looks_like_token", "redact", "redact_argv",
           "redact_url", "redact_value", "remember", "secrets_in_argv",
           "secrets_in_url", "webhook_secrets"]
