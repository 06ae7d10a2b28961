"""A loopback emulation of the GCS JSON API endpoints google-cloud-storage calls for a
checkpoint store: multipart and resumable uploads, object metadata, media download (whole
or a range), list (with pages and prefixes), delete; with generations and
ifGenerationMatch. Every request is recorded."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

import google_crc32c


@dataclass
class Request:
    method: str
    path: str  # unquoted
    query: dict[str, str]
    headers: dict[str, str]  # lowercase names
    metadata: dict = field(default_factory=dict)  # an upload's JSON part
    media: bytes = b""  # an upload's data part
    media_type: str = ""  # and its content type


@dataclass
class Blob:
    data: bytes
    generation: int
    content_type: str
    hashes: dict[str, str] = field(default_factory=dict)  # md5Hash, crc32c: made once


class FakeGcs:
    """Objects of one bucket in memory, served on 127.0.0.1 (`url`)."""

    def __init__(self, bucket: str, page_size: int = 2) -> None:
        self.bucket = bucket
        self.page_size = page_size
        self.objects: dict[str, Blob] = {}
        self.requests: list[Request] = []
        self.sessions: dict[str, dict] = {}  # resumable uploads under way, by upload id
        # called with each request before it is answered (an upload's once its parts are read)
        self.before: Callable[[Request], None] = lambda request: None
        self._generation = 1000
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out as written: Nagle would hold the body until the
            # client acknowledges the headers, which it delays (40 ms a request on Linux)
            disable_nagle_algorithm = True

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                fake._serve(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                fake._serve(self, "POST")

            def do_PUT(self) -> None:  # noqa: N802
                fake._serve(self, "PUT")

            def do_DELETE(self) -> None:  # noqa: N802
                fake._serve(self, "DELETE")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        # serve_forever looks for a shutdown every 0.05 s (0.5 s by default: each close)
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> FakeGcs:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- the API ---------------------------------------------------------------------

    def put(self, name: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        """Store an object directly (as another writer would), with a new generation."""
        with self._lock:
            self._generation += 1
            self.objects[name] = Blob(data, self._generation, content_type)

    def _resource(self, name: str, blob: Blob) -> dict:
        if not blob.hashes:
            blob.hashes.update(
                md5Hash=base64.b64encode(hashlib.md5(blob.data).digest()).decode(),
                crc32c=base64.b64encode(
                    google_crc32c.value(blob.data).to_bytes(4, "big")).decode())
        return {"kind": "storage#object", "bucket": self.bucket, "name": name,
                "id": f"{self.bucket}/{name}/{blob.generation}",
                "generation": str(blob.generation), "metageneration": "1",
                "size": str(len(blob.data)), "contentType": blob.content_type,
                **blob.hashes}

    def _serve(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        request = Request(method, unquote(parts.path), query,
                          {k.lower(): v for k, v in handler.headers.items()})
        with self._lock:
            self.requests.append(request)
        try:
            status, headers, payload = self._answer(request, body)
        except Exception as exc:  # a bug in the fake: make it visible in the test
            status, headers, payload = 500, {}, repr(exc).encode()
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def _answer(self, req: Request, body: bytes) -> tuple[int, dict[str, str], bytes]:
        objects_path = f"/storage/v1/b/{self.bucket}/o"
        if req.method == "POST" and req.path == f"/upload{objects_path}" and \
                req.query.get("uploadType") == "resumable":
            return self._resumable_start(req, body)
        if req.method == "PUT" and req.path == f"/upload{objects_path}":
            return self._resumable_chunk(req, body)
        if req.method == "POST" and req.path == f"/upload{objects_path}":
            return self._upload(req, body)  # calls `before` once its parts are read
        self.before(req)
        if req.method == "GET" and req.path == objects_path:
            return self._list(req)
        if req.method == "GET" and req.path == f"/storage/v1/b/{self.bucket}":
            return _json({"kind": "storage#bucket", "name": self.bucket, "id": self.bucket})
        for base in (f"/download{objects_path}/", f"{objects_path}/"):
            if req.path.startswith(base):
                name = req.path[len(base):]
                break
        else:
            return _error(404, f"no route {req.method} {req.path}")
        with self._lock:
            blob = self.objects.get(name)
        if blob is None:
            return _error(404, f"No such object: {self.bucket}/{name}")
        if "generation" in req.query and int(req.query["generation"]) != blob.generation:
            return _error(404, f"No such object: {self.bucket}/{name}#{req.query['generation']}")
        if "ifGenerationMatch" in req.query and int(req.query["ifGenerationMatch"]) != \
                blob.generation:
            return _error(412, "conditionNotMet")
        if req.method == "DELETE":
            with self._lock:
                del self.objects[name]
            return 204, {}, b""
        if req.query.get("alt") == "media":
            digest = self._resource(name, blob)
            headers = {"Content-Type": blob.content_type,
                       "x-goog-generation": str(blob.generation),
                       "x-goog-hash": f"crc32c={digest['crc32c']},md5={digest['md5Hash']}",
                       "x-goog-stored-content-length": str(len(blob.data))}
            wanted = req.headers.get("range", "")
            if not wanted.startswith("bytes="):
                return 200, headers, blob.data
            start, _, end = wanted.removeprefix("bytes=").partition("-")
            first, size = int(start), len(blob.data)
            if first >= size:
                return _error(416, "Requested range not satisfiable")
            last = min(int(end) if end else size - 1, size - 1)
            return 206, {**headers, "Content-Range": f"bytes {first}-{last}/{size}"}, \
                blob.data[first:last + 1]
        return _json(self._resource(name, blob))

    def _upload(self, req: Request, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if req.query.get("uploadType") != "multipart":
            return _error(400, f"uploadType {req.query.get('uploadType')!r} not emulated")
        message = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + req.headers["content-type"].encode() + b"\r\n\r\n" + body)
        meta_part, media_part = list(message.iter_parts())
        req.metadata = json.loads(meta_part.get_payload(decode=True))
        req.media = media_part.get_payload(decode=True)
        req.media_type = media_part.get_content_type()
        name = req.metadata["name"]
        self.before(req)
        with self._lock:
            if req.query.get("ifGenerationMatch") == "0" and name in self.objects:
                return _error(412, "conditionNotMet")
            self._generation += 1
            blob = Blob(req.media, self._generation, req.media_type)
            self.objects[name] = blob
        for key in ("md5Hash", "crc32c"):  # the server checks a checksum the client sends
            sent = req.metadata.get(key)
            if sent is not None and sent != self._resource(name, blob)[key]:
                with self._lock:
                    del self.objects[name]
                return _error(400, f"{key} mismatch")
        return _json(self._resource(name, blob))

    def _resumable_start(self, req: Request, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """A resumable upload's session: its metadata kept until its last chunk."""
        metadata = json.loads(body or b"{}")
        name = metadata.get("name") or req.query.get("name", "")
        with self._lock:
            upload_id = f"u{len(self.sessions) + 1}"
            self.sessions[upload_id] = {"name": name, "metadata": metadata,
                                        "data": bytearray(), "query": dict(req.query)}
        location = f"{self.url}/upload/storage/v1/b/{self.bucket}/o?uploadType=resumable" \
            f"&upload_id={upload_id}"
        return 200, {"Location": location}, b""

    def _resumable_chunk(self, req: Request, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """One chunk (Content-Range: bytes FIRST-LAST/TOTAL, TOTAL * until the last): 308
        with the bytes kept so far, then the object once TOTAL bytes are in."""
        session = self.sessions.get(req.query.get("upload_id", ""))
        if session is None:
            return _error(404, "no such upload")
        span, _, total = req.headers.get("content-range", "").removeprefix(
            "bytes ").partition("/")
        if span != "*":
            first = int(span.split("-")[0])
            if first != len(session["data"]):
                return _error(400, f"chunk at {first}, expected {len(session['data'])}")
            session["data"] += body
        if total == "*" or len(session["data"]) < int(total):
            kept = len(session["data"])
            return 308, ({"Range": f"bytes=0-{kept - 1}"} if kept else {}), b""
        name = session["name"]
        with self._lock:
            if session["query"].get("ifGenerationMatch") == "0" and name in self.objects:
                return _error(412, "conditionNotMet")
            self._generation += 1
            blob = Blob(bytes(session["data"]), self._generation,
                        session["metadata"].get("contentType", "application/octet-stream"))
            self.objects[name] = blob
        return _json(self._resource(name, blob))

    def _list(self, req: Request) -> tuple[int, dict[str, str], bytes]:
        prefix = req.query.get("prefix", "")
        delimiter = req.query.get("delimiter")
        with self._lock:
            names = sorted(n for n in self.objects if n.startswith(prefix))
            entries: list[tuple[str, bool]] = []  # (name or folder, is a folder)
            seen: set[str] = set()
            for name in names:
                rest = name[len(prefix):]
                if delimiter and delimiter in rest:
                    folder = prefix + rest.split(delimiter)[0] + delimiter
                    if folder not in seen:
                        seen.add(folder)
                        entries.append((folder, True))
                else:
                    entries.append((name, False))
            start = int(req.query.get("pageToken", "0"))
            page = entries[start:start + self.page_size]
            doc: dict = {"kind": "storage#objects",
                         "items": [self._resource(n, self.objects[n]) for n, f in page if not f],
                         "prefixes": [n for n, f in page if f]}
        if start + self.page_size < len(entries):
            doc["nextPageToken"] = str(start + self.page_size)
        return _json(doc)

    def object_path(self, name: str) -> str:
        return f"/storage/v1/b/{self.bucket}/o/{quote(name, safe='')}"


def _json(doc: dict) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "application/json"}, json.dumps(doc).encode()


def _error(status: int, message: str) -> tuple[int, dict[str, str], bytes]:
    return _json_status(status, {"error": {"code": status, "message": message,
                                           "errors": [{"message": message}]}})


def _json_status(status: int, doc: dict) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(doc).encode()
