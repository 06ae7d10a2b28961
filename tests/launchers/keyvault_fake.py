"""Azure Key Vault from its documented REST shapes (api-version 7.5): Set Secret, Get Secret,
Get Secrets (paged by nextLink), Delete Secret, Get Deleted Secret, Purge Deleted Secret
and Recover Deleted Secret, with the soft delete every vault has now (a deleted secret's
name cannot be set again until it is purged or recovered) and, when asked, purge
protection. Names are compared without case, as Key Vault does.

One vault's state answers two ways: through `Transport`, the azure-core transport the
launcher's SDK client is given (no socket), and on a loopback HTTP server (`serve`), which
the VM's plain HTTP calls reach. A request without a token gets the 401 challenge the SDK
expects first; only VAULT_TOKEN is accepted. Every authorised request is kept in `requests`
as (method, path, query, JSON body) for the tests to assert.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.launchers.azure_fake import VAULT_TOKEN

VAULT = "https://costsched-test.vault.azure.net"
API_VERSION = "7.5"
CHALLENGE = ('Bearer authorization="https://login.microsoftonline.com/00000000-0000-0000-'
             '0000-0000000000bb", resource="https://vault.azure.net"')
Answer = tuple[int, dict[str, str], bytes]


@dataclass
class Secret:
    name: str
    value: str
    tags: dict[str, str]
    created: int = field(default_factory=lambda: int(time.time()))
    versions: int = 1
    deleted: int = 0


def _json(status: int, doc: Any) -> Answer:
    return status, {"Content-Type": "application/json; charset=utf-8"}, json.dumps(doc).encode()


def _error(status: int, code: str, message: str, inner: str = "") -> Answer:
    error: dict[str, Any] = {"code": code, "message": message}
    if inner:
        error["innererror"] = {"code": inner}
    return _json(status, {"error": error})


class Vault:
    """One vault's secrets. `purge_protected`: purges are refused (403), as a vault with
    purge protection refuses them; `forbid`: (method, first path segment) pairs answered
    403 ForbiddenByRbac, as for an identity without the role; `page`: list page size."""

    def __init__(self, base: str = VAULT, page: int = 25) -> None:
        self.base = base
        self.secrets: dict[str, Secret] = {}
        self.deleted: dict[str, Secret] = {}
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self.challenges = 0
        self.purge_protected = False
        self.forbid: set[tuple[str, str]] = set()
        self.page = page

    # what the tests look at
    def names(self) -> list[str]:
        return sorted(s.name for s in self.secrets.values())

    def calls(self) -> list[tuple[str, str]]:
        return [(m, p) for m, p, _, _ in self.requests]

    def answer(self, method: str, url: str, headers: dict[str, str], body: bytes) -> Answer:
        parts = urlsplit(url)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        path = unquote(parts.path)
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization")
        if auth is None:  # the SDK's first, bodiless request: the challenge
            assert not body, "a challenge request carries no content"
            self.challenges += 1
            return 401, {"WWW-Authenticate": CHALLENGE, "Content-Length": "0"}, b""
        if auth != f"Bearer {VAULT_TOKEN}":
            return _error(401, "Unauthorized", "AKV10022: Invalid audience.")
        doc = json.loads(body) if body else None
        self.requests.append((method, path, query, doc))
        if query.get("api-version") != API_VERSION:
            return _error(400, "BadParameter", "The specified version is not supported.")
        segments = path.strip("/").split("/")
        if (method, segments[0]) in self.forbid:
            return _error(403, "Forbidden", "Caller is not authorized to perform action on "
                          "resource.\r\nIf role assignments were recently changed, please "
                          "wait several minutes.", "ForbiddenByRbac")
        if segments == ["secrets"] and method == "GET":
            return self._list(query)
        if segments[0] == "secrets" and len(segments) >= 2:
            return self._secret(method, segments[1], doc)
        if segments[0] == "deletedsecrets" and len(segments) >= 2:
            return self._deleted(method, segments[1], segments[2:])
        return _error(400, "BadParameter", f"unexpected {method} {path}")

    def _bundle(self, secret: Secret, value: bool = True) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "id": f"{self.base}/secrets/{secret.name}/{secret.versions:032x}",
            "attributes": {"enabled": True, "created": secret.created,
                           "updated": secret.created, "recoverableDays": 90,
                           "recoveryLevel": "Recoverable+Purgeable"},
            "tags": secret.tags}
        if value:
            doc["value"] = secret.value
        return doc

    def _secret(self, method: str, name: str, doc: Any) -> Answer:
        key = name.lower()
        if method == "PUT":
            if key in self.deleted:
                return _error(409, "Conflict", f"Secret {name} is currently in a deleted but "
                              "recoverable state, and its name cannot be reused; in this "
                              "state, the secret can only be recovered or purged.",
                              "ObjectIsDeletedButRecoverable")
            found = self.secrets.get(key)
            if found is None:
                found = self.secrets[key] = Secret(name, doc["value"], doc.get("tags") or {})
            else:
                found.value, found.tags = doc["value"], doc.get("tags") or {}
                found.versions += 1
            return _json(200, self._bundle(found))
        found = self.secrets.get(key)
        if found is None:
            return _error(404, "SecretNotFound", f"A secret with (name/id) {name} was not "
                          "found in this key vault.")
        if method == "GET":
            return _json(200, self._bundle(found))
        if method == "DELETE":
            del self.secrets[key]
            found.deleted = int(time.time())
            self.deleted[key] = found
            return _json(200, {**self._bundle(found, value=False),
                               "recoveryId": f"{self.base}/deletedsecrets/{found.name}",
                               "deletedDate": found.deleted,
                               "scheduledPurgeDate": found.deleted + 90 * 86400})
        return _error(405, "MethodNotAllowed", method)

    def _deleted(self, method: str, name: str, rest: list[str]) -> Answer:
        key = name.lower()
        found = self.deleted.get(key)
        if found is None:
            return _error(404, "SecretNotFound", f"Deleted Secret not found: {name}")
        if method == "GET" and not rest:
            return _json(200, {**self._bundle(found, value=False),
                               "recoveryId": f"{self.base}/deletedsecrets/{found.name}",
                               "deletedDate": found.deleted})
        if method == "DELETE" and not rest:
            if self.purge_protected:
                return _error(403, "Forbidden", "Operation \"purge\" is not allowed because "
                              "purge protection is enabled for this vault.")
            del self.deleted[key]
            return 204, {"Content-Length": "0"}, b""
        if method == "POST" and rest == ["recover"]:
            self.secrets[key] = self.deleted.pop(key)
            return _json(200, self._bundle(found, value=False))
        return _error(405, "MethodNotAllowed", method)

    def _list(self, query: dict[str, str]) -> Answer:
        start = int(query.get("$skiptoken") or 0)
        items = sorted(self.secrets.values(), key=lambda s: s.name.lower())
        shown = items[start:start + self.page]
        doc: dict[str, Any] = {"value": [
            {k: v for k, v in self._bundle(s, value=False).items() if k != "id"}
            | {"id": f"{self.base}/secrets/{s.name}"} for s in shown]}
        doc["nextLink"] = (f"{self.base}/secrets?api-version={API_VERSION}&$skiptoken="
                           f"{start + self.page}" if start + self.page < len(items) else None)
        return _json(200, doc)


def transport(vault: Vault) -> Any:
    """An azure-core HttpTransport answering from `vault` (what the SDK's client is given)."""
    from azure.core.pipeline.transport import HttpTransport
    from azure.core.rest._http_response_impl import HttpResponseImpl
    from azure.core.utils import case_insensitive_dict

    class Closed:
        def close(self) -> None:
            pass

    class Transport(HttpTransport):
        def __enter__(self) -> Transport:
            return self

        def __exit__(self, *exc: Any) -> None:
            pass

        def open(self) -> None:
            pass

        def close(self) -> None:
            pass

        def send(self, request: Any, **kwargs: Any) -> Any:
            content = request.content
            body = content.encode() if isinstance(content, str) else (content or b"")
            status, headers, data = vault.answer(request.method, request.url,
                                                 dict(request.headers), body)
            response = HttpResponseImpl(
                request=request, internal_response=Closed(), status_code=status,
                reason="", content_type=headers.get("Content-Type"),
                headers=case_insensitive_dict(headers), stream_download_generator=None)
            response._content = data
            return response

    return Transport()


def serve(vault: Vault) -> Any:
    """A loopback HTTP server answering from `vault` (entered by the caller); its `url` is
    where the VM's calls go."""
    from tests.price_collectors.conftest import Loopback

    server = Loopback()
    server.handler = lambda h: vault.answer(h.command, h.path, dict(h.headers.items()), h.body)
    vault.base = server.url
    return server
