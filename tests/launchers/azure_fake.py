"""Azure on loopback, from the documented request and response shapes: Resource Manager
(virtual machines, networks, resource groups, proximity placement groups, long-running
operations), Blob storage (path-style, as an emulator's: /ACCOUNT/CONTAINER/BLOB) and the
Instance Metadata Service (managed identity tokens, Scheduled Events, the VM's name); Key
Vault is tests.launchers.keyvault_fake.
Every request is recorded for the tests to assert; only the tokens below are accepted.

The SDKs reach Resource Manager and Blob over HTTPS only when they send a token, so both are
served with a certificate made here for 127.0.0.1 (`tls`), trusted through
REQUESTS_CA_BUNDLE; the metadata service is plain HTTP, as on a VM.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import ssl
import threading
import time
from dataclasses import dataclass, field
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit
from xml.sax.saxutils import escape

ARM_TOKEN = "arm-token"  # what the static credential and the managed identity give for ARM
STORAGE_TOKEN = "storage-token"  # ... and for Blob storage
VAULT_TOKEN = "vault-token"  # ... and for Key Vault (tests.launchers.keyvault_fake)
SUBSCRIPTION = "00000000-0000-0000-0000-0000000000aa"
ACCOUNT = "costschedckpt"
Answer = tuple[int, dict[str, str], bytes]


def tls(folder: Path) -> tuple[ssl.SSLContext, Path]:
    """A server context for 127.0.0.1 with a self-signed certificate, and that certificate
    (the CA bundle clients trust)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    folder.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = folder / "loopback.pem", folder / "loopback.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context, cert_path


class StaticToken:
    """A TokenCredential that gives one fixed token for any scope (asked scopes recorded)."""

    def __init__(self, token: str = ARM_TOKEN) -> None:
        self.token, self.scopes = token, []

    def get_token(self, *scopes: str, **_: Any) -> Any:
        from azure.core.credentials import AccessToken

        self.scopes.extend(scopes)
        return AccessToken(self.token, int(time.time()) + 3600)


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body or b"null")


def _request(handler: Any) -> Request:
    parts = urlsplit(handler.path)
    return Request(handler.command, unquote(parts.path),
                   {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()},
                   {k.lower(): v for k, v in handler.headers.items()}, handler.body)


def _json(status: int, doc: Any, headers: dict[str, str] | None = None) -> Answer:
    return status, {"Content-Type": "application/json", **(headers or {})}, \
        json.dumps(doc).encode()


def _error(status: int, code: str, message: str) -> Answer:
    return _json(status, {"error": {"code": code, "message": message}})


def _http_date(at: float | None = None) -> str:
    return format_datetime(dt.datetime.fromtimestamp(at or time.time(), dt.timezone.utc),
                           usegmt=True)


# --- Blob storage ------------------------------------------------------------------------


@dataclass
class Blob:
    data: bytes
    content_type: str
    modified: float = field(default_factory=time.time)
    etag: str = field(default_factory=lambda: f'"0x{time.time_ns():X}"')


class BlobService:
    """One storage account's containers, path-style: /ACCOUNT/CONTAINER[/BLOB]. Create
    (Put Blob, or Put Block then Put Block List; If-None-Match: * honoured), read (Get
    Blob, ranges), Get Blob Properties, Delete Blob, List Blobs (prefix, delimiter, pages of
    `page`, NextMarker) and Get Container Properties, as the Blob service REST API
    documents them."""

    def __init__(self, account: str = ACCOUNT, containers: tuple[str, ...] = ("ckpt",),
                 page: int = 5000) -> None:
        self.account = account
        self.containers: dict[str, dict[str, Blob]] = {c: {} for c in containers}
        self.page = page
        self.requests: list[Request] = []
        self.blocks: dict[str, dict[str, bytes]] = {}  # blob name -> staged block id -> data
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Answer:
        with self._lock:
            self.requests.append(request)
        if request.headers.get("authorization") != f"Bearer {STORAGE_TOKEN}":
            return self._error(401, "NoAuthenticationInformation", "no storage token")
        if not request.headers.get("x-ms-version"):
            return self._error(400, "MissingRequiredHeader", "x-ms-version")
        _, account, rest = request.path.split("/", 2) if request.path.count("/") >= 2 \
            else ("", request.path.strip("/"), "")
        container, _, name = rest.partition("/")
        if account != self.account or container not in self.containers:
            return self._error(404, "ContainerNotFound", "The specified container does "
                               "not exist.")
        blobs = self.containers[container]
        with self._lock:
            if not name:
                if request.query.get("comp") == "list":
                    return self._list(container, blobs, request.query)
                if request.query.get("restype") == "container" and request.method == "GET":
                    return 200, {"ETag": '"0x1"', "Last-Modified": _http_date()}, b""
                return self._error(400, "UnsupportedHttpVerb", request.method)
            if request.method == "PUT":
                return self._put(blobs, name, request)
            if name not in blobs:
                return self._error(404, "BlobNotFound", "The specified blob does not exist.")
            if request.method == "DELETE":
                del blobs[name]
                return 202, {}, b""
            return self._get(blobs[name], request)

    def _error(self, status: int, code: str, message: str) -> Answer:
        body = (f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code>'
                f"<Message>{escape(message)}</Message></Error>").encode()
        return status, {"x-ms-error-code": code, "Content-Type": "application/xml"}, body

    def _put(self, blobs: dict[str, Blob], name: str, request: Request) -> Answer:
        comp = request.query.get("comp")
        if comp == "block":  # Put Block: staged under the blob's name until committed
            block = request.query.get("blockid", "")
            if not block:
                return self._error(400, "InvalidQueryParameterValue", "blockid")
            self.blocks.setdefault(name, {})[block] = request.body
            return 201, {"x-ms-request-server-encrypted": "true"}, b""
        if comp == "blocklist":  # Put Block List: the staged blocks, in order, become it
            if request.headers.get("if-none-match") == "*" and name in blobs:
                return self._error(409, "BlobAlreadyExists",
                                   "The specified blob already exists.")
            staged = self.blocks.pop(name, {})
            ids = re.findall(r"<(?:Latest|Uncommitted|Committed)>([^<]*)</", request.body.decode())
            if any(i not in staged for i in ids):
                return self._error(400, "InvalidBlockList", "The specified block list is "
                                   "invalid.")
            blob = Blob(b"".join(staged[i] for i in ids),
                        request.headers.get("x-ms-blob-content-type",
                                            "application/octet-stream"))
            blobs[name] = blob
            return 201, {"ETag": blob.etag, "Last-Modified": _http_date(blob.modified),
                         "x-ms-request-server-encrypted": "true"}, b""
        if request.headers.get("x-ms-blob-type") != "BlockBlob":
            return self._error(400, "MissingRequiredHeader", "x-ms-blob-type")
        if request.headers.get("if-none-match") == "*" and name in blobs:
            return self._error(409, "BlobAlreadyExists", "The specified blob already exists.")
        blob = Blob(request.body, request.headers.get("x-ms-blob-content-type",
                                                      "application/octet-stream"))
        blobs[name] = blob
        return 201, {"ETag": blob.etag, "Last-Modified": _http_date(blob.modified),
                     "x-ms-request-server-encrypted": "true"}, b""

    def _get(self, blob: Blob, request: Request) -> Answer:
        size = len(blob.data)
        headers = {"ETag": blob.etag, "Last-Modified": _http_date(blob.modified),
                   "x-ms-blob-type": "BlockBlob", "Content-Type": blob.content_type,
                   "Accept-Ranges": "bytes", "x-ms-creation-time": _http_date(blob.modified)}
        if request.method == "HEAD":
            return 200, {**headers, "Content-Length": str(size)}, b""
        wanted = request.headers.get("x-ms-range") or request.headers.get("range")
        if not wanted:
            return 200, headers, blob.data
        start, _, end = wanted.removeprefix("bytes=").partition("-")
        first = int(start)
        if first >= size:
            return self._error(416, "InvalidRange", "The range specified is invalid.")
        last = min(int(end) if end else size - 1, size - 1)
        return 206, {**headers, "Content-Range": f"bytes {first}-{last}/{size}"}, \
            blob.data[first:last + 1]

    def _list(self, container: str, blobs: dict[str, Blob], query: dict[str, str]) -> Answer:
        prefix, delimiter = query.get("prefix", ""), query.get("delimiter", "")
        entries: list[tuple[str, Blob | None]] = []
        seen: set[str] = set()
        for name in sorted(n for n in blobs if n.startswith(prefix)):
            rest = name[len(prefix):]
            if delimiter and delimiter in rest:
                folder = prefix + rest.split(delimiter, 1)[0] + delimiter
                if folder not in seen:
                    seen.add(folder)
                    entries.append((folder, None))
                continue
            entries.append((name, blobs[name]))
        start = int(query.get("marker") or 0)
        shown = entries[start:start + self.page]
        more = start + self.page < len(entries)
        items = "".join(
            f"<BlobPrefix><Name>{escape(n)}</Name></BlobPrefix>" if b is None else
            f"<Blob><Name>{escape(n)}</Name><Properties><Last-Modified>"
            f"{_http_date(b.modified)}</Last-Modified><Etag>{b.etag}</Etag>"
            f"<Content-Length>{len(b.data)}</Content-Length><Content-Type>{b.content_type}"
            "</Content-Type><BlobType>BlockBlob</BlobType></Properties></Blob>"
            for n, b in shown)
        xml = ('<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint='
               f'"https://{self.account}.blob.core.windows.net/" ContainerName="{container}">'
               f"<Prefix>{escape(prefix)}</Prefix><Delimiter>{escape(delimiter)}</Delimiter>"
               f"<Blobs>{items}</Blobs><NextMarker>{start + self.page if more else ''}"
               "</NextMarker></EnumerationResults>")
        return 200, {"Content-Type": "application/xml"}, xml.encode()


# --- Resource Manager --------------------------------------------------------------------


class Arm:
    """The Resource Manager of one subscription: resource groups, virtual networks, network
    security groups and interfaces, proximity placement groups and virtual machines (PUT,
    GET with $expand=instanceView, list, PATCH tags, DELETE, runCommand,
    retrieveBootDiagnosticsData), long-running ones through Azure-AsyncOperation.

    `refuse[name] = (status, code)` (or `(status, code, message)`): the VM's PUT is refused
    at once; `fail[name] = code`: its operation fails (the VM is left Failed, as Azure
    leaves it); `evict(name)`: Azure deletes a Spot VM. `usages[location]`: the Compute
    usages of a location (its quotas, as `usage.list` lists them)."""

    def __init__(self, subscription: str = SUBSCRIPTION) -> None:
        self.subscription = subscription
        self.resources: dict[str, dict] = {}  # lower-case id -> document
        self.operations: dict[str, dict] = {}
        self.requests: list[Request] = []
        self.refuse: dict[str, tuple[int, str]] = {}
        self.fail: dict[str, str] = {}
        self.pending: set[str] = set()  # VMs that stay Creating (not running yet)
        self.serial: dict[str, str] = {}  # VM name -> its serial log
        self.blob_url = ""  # where the serial logs are served (BlobService's /ACCOUNT/...)
        # Long-running operations answered done at once (201 with a terminal provisioning
        # state and no Azure-AsyncOperation: nothing to poll), as ARM may answer them.
        self.instant = False
        self.forbid: set[str] = set()  # path parts answered 403 AuthorizationFailed
        self.usages: dict[str, list[dict]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def add_group(self, name: str = "costsched", location: str = "eastus") -> None:
        path = f"/subscriptions/{self.subscription}/resourceGroups/{name}"
        self.resources[path.lower()] = {"id": path, "name": name, "location": location,
                                        "properties": {"provisioningState": "Succeeded"}}

    # what the tests look at
    def calls(self, method: str, marker: str = "") -> list[Request]:
        return [r for r in self.requests if r.method == method and marker in r.path]

    def vm(self, name: str, group: str = "costsched") -> dict | None:
        return self.resources.get(self._vm_id(group, name).lower())

    def vms(self) -> list[dict]:
        return [d for k, d in self.resources.items() if "/virtualmachines/" in k]

    def evict(self, name: str, group: str = "costsched") -> None:
        """Azure evicts a Spot VM with eviction policy Delete: it is gone, NIC and all."""
        with self._lock:
            doc = self.resources.pop(self._vm_id(group, name).lower())
            assert doc["properties"]["priority"] == "Spot"
            self.resources.pop(self._nic_id(group, f"{name}-nic").lower(), None)

    def _vm_id(self, group: str, name: str) -> str:
        return (f"/subscriptions/{self.subscription}/resourceGroups/{group}/providers/"
                f"Microsoft.Compute/virtualMachines/{name}")

    def _nic_id(self, group: str, name: str) -> str:
        return (f"/subscriptions/{self.subscription}/resourceGroups/{group}/providers/"
                f"Microsoft.Network/networkInterfaces/{name}")

    def __call__(self, request: Request) -> Answer:
        with self._lock:
            self.requests.append(request)
            if request.headers.get("authorization") != f"Bearer {ARM_TOKEN}":
                return _error(401, "AuthenticationFailed", "no management token")
            if not request.query.get("api-version"):
                return _error(400, "MissingApiVersionParameter", "api-version")
            if any(part in request.path for part in self.forbid):
                return _error(403, "AuthorizationFailed", "The client 'x' does not have "
                              "authorization to perform action over scope")
            base = f"https://{request.headers['host']}"
            path = request.path.rstrip("/")
            if "/operations/" in path:
                return self._operation(path)
            if path.lower().endswith("/usages") and \
                    "/providers/microsoft.compute/locations/" in path.lower():
                return _json(200, {"value": self.usages.get(path.split("/")[-2], [])})
            segments = path.split("/")
            if len(segments) == 5 and segments[3].lower() == "resourcegroups":
                return self._group(request, path)
            if len(segments) > 5 and "/".join(segments[:5]).lower() not in self.resources:
                return _error(404, "ResourceGroupNotFound",
                              f"Resource group '{segments[4]}' could not be found.")
            lower = path.lower()
            if lower.endswith("/runcommand"):
                return self._async(base, "runCommand", path, 202)
            if lower.endswith("/retrievebootdiagnosticsdata"):
                name = segments[-2]
                return _json(200, {"serialConsoleLogBlobUri":
                                   f"{self.blob_url}/bootdiagnostics/{name}.log?sv=x&sig=s"})
            if "/providers/microsoft.compute/virtualmachines/" in lower and \
                    len(segments) == 9:
                return self._vm(request, base, path, segments)
            if lower.endswith("/providers/microsoft.compute/virtualmachines"):
                return self._list(lower + "/")
            return self._plain(request, base, path)

    def _group(self, request: Request, path: str) -> Answer:
        key = path.lower()
        if request.method == "PUT":
            doc = {"id": path, "name": path.rsplit("/", 1)[1], "type":
                   "Microsoft.Resources/resourceGroups", **request.json(),
                   "properties": {"provisioningState": "Succeeded"}}
            status = 200 if key in self.resources else 201
            self.resources[key] = doc
            return _json(status, doc)
        if key not in self.resources:
            return _error(404, "ResourceGroupNotFound", "Resource group could not be found.")
        return _json(200, self.resources[key])

    def _operation(self, path: str) -> Answer:
        op = self.operations[path.rsplit("/", 1)[1]]
        if op.get("error"):
            return _json(200, {"status": "Failed", "error": op["error"]})
        return _json(200, {"status": "Succeeded"})

    def _async(self, base: str, kind: str, path: str, status: int,
               doc: dict | None = None, error: dict | None = None) -> Answer:
        if self.instant and error is None:
            if doc and kind == "createVm":
                doc = self.resources[path.lower()]
            return _json(200 if status == 202 else status, doc if doc is not None else {})
        op = f"op-{next(self._ids)}"
        self.operations[op] = {"kind": kind, "path": path, "error": error}
        provider = path.split("/providers/", 1)[1].split("/", 1)[0]
        url = (f"{base}/subscriptions/{self.subscription}/providers/{provider}/"
               f"locations/eastus/operations/{op}?api-version=2024-07-01")
        return _json(status, doc if doc is not None else {},
                     {"Azure-AsyncOperation": url, "Retry-After": "0"})

    def _plain(self, request: Request, base: str, path: str) -> Answer:
        """Networks, security groups, interfaces, placement groups: stored as PUT (their
        id and a provisioning state added)."""
        key = path.lower()
        if request.method == "GET":
            if key not in self.resources:
                return _error(404, "ResourceNotFound", f"The Resource '{path}' was not found.")
            return _json(200, self.resources[key])
        if request.method == "DELETE":
            self.resources.pop(key, None)
            return 200, {}, b""
        doc = request.json()
        doc.update({"id": path, "name": path.rsplit("/", 1)[1]})
        doc.setdefault("properties", {})["provisioningState"] = "Succeeded"
        for subnet in doc["properties"].get("subnets", []):
            subnet["id"] = f"{path}/subnets/{subnet['name']}"
        status = 200 if key in self.resources else 201
        self.resources[key] = doc
        if "/proximityplacementgroups/" in key:
            return _json(status, doc)
        return self._async(base, "put", path, status, doc)

    def _list(self, prefix: str) -> Answer:
        depth = prefix.count("/")
        return _json(200, {"value": [d for k, d in sorted(self.resources.items())
                                     if k.startswith(prefix) and k.count("/") == depth]})

    def _vm(self, request: Request, base: str, path: str, segments: list[str]) -> Answer:
        key, name, group = path.lower(), segments[-1], segments[4]
        if request.method == "PUT":
            if name in self.refuse:
                status, code, *said = self.refuse[name]
                return _error(status, code, said[0] if said else f"{code} for {name}")
            doc = request.json()
            props = doc["properties"]
            if key in self.resources:  # the same PUT again: an update, no second VM
                return _json(200, self.resources[key])
            nic = props["networkProfile"]["networkInterfaceConfigurations"][0]
            nic_id = self._nic_id(group, nic["name"])
            self.resources[nic_id.lower()] = {
                "id": nic_id, "name": nic["name"], "properties": {"ipConfigurations": [{
                    "name": "ipconfig", "properties": {
                        "privateIPAddress": f"10.8.0.{next(self._ids) + 3}"}}]}}
            failed = self.fail.get(name)
            doc.update({"id": path, "name": name, "type": "Microsoft.Compute/virtualMachines"})
            props["provisioningState"] = "Failed" if failed else (
                "Creating" if name in self.pending else "Succeeded")
            props["networkProfile"]["networkInterfaces"] = [{"id": nic_id}]
            props["vmId"] = f"vm-{next(self._ids)}"
            # As Resource Manager writes it (api-version 2021-11-01 on): 7 digits of fraction.
            props["timeCreated"] = dt.datetime.now(dt.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%S.%f0+00:00")
            self.resources[key] = doc
            error = {"code": failed, "message": f"{failed} for {name}"} if failed else None
            shown = json.loads(json.dumps(doc))
            shown["properties"]["provisioningState"] = "Creating"
            return self._async(base, "createVm", path, 201, shown, error)
        if key not in self.resources:
            return _error(404, "ResourceNotFound",
                          f"The Resource 'Microsoft.Compute/virtualMachines/{name}' under "
                          f"resource group '{group}' was not found.")
        doc = self.resources[key]
        if request.method == "DELETE":
            del self.resources[key]
            self.resources.pop(doc["properties"]["networkProfile"]["networkInterfaces"][0][
                "id"].lower(), None)
            return self._async(base, "delete", path, 202)
        if request.method == "PATCH":
            doc["tags"] = request.json().get("tags", doc.get("tags"))
            return self._async(base, "update", path, 200, doc)
        shown = json.loads(json.dumps(doc))
        if request.query.get("$expand") == "instanceView":
            state = shown["properties"]["provisioningState"]
            statuses = [{"code": f"ProvisioningState/{state.lower()}"}]
            if state == "Succeeded":
                statuses.append({"code": "PowerState/running"})
            elif state == "Failed":
                statuses[0] = {"code": f"ProvisioningState/failed/{self.fail.get(name)}",
                               "message": f"{self.fail.get(name)} for {name}"}
            shown["properties"]["instanceView"] = {"statuses": statuses}
        return _json(200, shown)


# --- the Instance Metadata Service -------------------------------------------------------


class Imds:
    """What a VM's metadata server says: managed identity tokens (per resource), the
    Scheduled Events document (`preempt()` adds a Preempt event for `vm`) and the VM's
    name (header Metadata: true, as documented)."""

    def __init__(self, vm: str = "") -> None:
        self.vm = vm
        self.events: list[dict] = []
        self.incarnation = 1
        self.requests: list[Request] = []

    def preempt(self) -> None:
        self.incarnation += 1
        self.events.append({"EventId": "A123BC45-1234-5678-AB90-ABCDEF123456",
                            "EventStatus": "Scheduled", "EventType": "Preempt",
                            "ResourceType": "VirtualMachine", "Resources": [self.vm],
                            "NotBefore": _http_date(time.time() + 30), "Description": "",
                            "EventSource": "Platform", "DurationInSeconds": -1})

    def calm(self) -> None:
        self.incarnation += 1
        self.events = []

    def __call__(self, request: Request) -> Answer:
        self.requests.append(request)
        if request.headers.get("metadata") != "true":
            return 400, {}, b'{"error": "Bad request. Required metadata header not specified"}'
        if request.path == "/metadata/identity/oauth2/token":
            token = {"https://management.azure.com": ARM_TOKEN,
                     "https://storage.azure.com": STORAGE_TOKEN,
                     "https://vault.azure.net": VAULT_TOKEN}.get(
                request.query.get("resource", "").rstrip("/"), "other-token")
            return _json(200, {"access_token": token, "expires_in": "3600",
                               "expires_on": str(int(time.time()) + 3600),
                               "resource": request.query.get("resource"),
                               "token_type": "Bearer"})
        if request.path == "/metadata/scheduledevents":
            return _json(200, {"DocumentIncarnation": self.incarnation, "Events": self.events})
        if request.path == "/metadata/instance/compute/name":
            return 200, {"Content-Type": "text/plain"}, self.vm.encode()
        return 404, {}, b""


class Azure:
    """Resource Manager and Blob storage on one HTTPS loopback (by path: /subscriptions/...
    is Resource Manager), the metadata service on a plain one."""

    def __init__(self, folder: Path, made: tuple[ssl.SSLContext, Path] | None = None) -> None:
        from tests.price_collectors.conftest import Loopback

        context, self.ca = made or tls(folder)
        self.arm, self.blob, self.imds = Arm(), BlobService(), Imds()
        self.https = Loopback(tls=context)
        self.metadata = Loopback()
        self.https.handler = self._route
        self.metadata.handler = lambda handler: self.imds(_request(handler))
        self.url = self.https.url
        self.blob_endpoint = f"{self.url}/{self.blob.account}"
        self.arm.blob_url = self.blob_endpoint
        self.blob.containers["bootdiagnostics"] = {}

    def _route(self, handler: Any) -> Answer:
        request = _request(handler)
        if request.path.startswith("/subscriptions/"):
            return self.arm(request)
        if request.path.startswith(f"/{self.blob.account}/bootdiagnostics/") \
                and request.query.get("sig"):  # a shared access signature: no token
            name = request.path.rsplit("/", 1)[1].removesuffix(".log")
            return 200, {"Content-Type": "text/plain"}, self.arm.serial.get(name, "").encode()
        return self.blob(request)

    def env(self) -> dict[str, str]:
        """What a process (costsched here, or a played VM) is given to reach them."""
        return {"REQUESTS_CA_BUNDLE": str(self.ca),
                "AZURE_POD_IDENTITY_AUTHORITY_HOST": self.metadata.url,
                "AZURE_STORAGE_SERVICE_ENDPOINT": self.blob_endpoint,
                "AZURE_STORAGE_ACCOUNT": self.blob.account}

    def __enter__(self) -> Azure:
        self.https.__enter__()
        self.metadata.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.https.__exit__(*exc)
        self.metadata.__exit__(*exc)


def az_uri(container: str, prefix: str) -> str:
    return f"az://{container}/{quote(prefix)}"
