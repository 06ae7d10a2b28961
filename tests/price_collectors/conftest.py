"""Fixtures of the collector tests: a hermetic AWS environment, no retry sleeps, a loopback
HTTP server, and the recorded AWS bodies grouped by region."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import hermetic_aws_env

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "collectors"


@pytest.fixture(autouse=True)
def hermetic_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake credentials, no profile or endpoint from the machine, and no backoff sleeps.

    Retries still happen (botocore's handler decides them); only the sleep between them
    is zero, so that tests of throttling do not wait seconds.
    """
    hermetic_aws_env(monkeypatch, tmp_path, ("AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_PRICING"))
    import botocore.retries.standard

    monkeypatch.setattr(botocore.retries.standard.ExponentialBackoff, "delay_amount",
                        lambda self, context: 0.0)


@pytest.fixture(scope="session")
def recorded_spot(dispa: Path) -> dict[str, list[dict]]:
    """region -> every SpotPriceHistory item of dispa2020/aws/cost/<region>/*.json, in the
    order `recorded.read_paths` reads them."""
    by_region: dict[str, list[dict]] = {}
    for path in sorted((dispa / "aws" / "cost").rglob("*.json")):
        items = json.loads(path.read_text())["SpotPriceHistory"]
        by_region.setdefault(path.parent.name, []).extend(items)
    return by_region


@pytest.fixture(scope="session")
def price_list() -> dict[str, list[dict]]:
    return json.loads((FIXTURES / "aws_price_list.json").read_text())


# --- a loopback HTTP server --------------------------------------------------------------

Route = Callable[[BaseHTTPRequestHandler], tuple[int, dict[str, str], bytes]]


class Loopback:
    """A threaded HTTP server on 127.0.0.1 whose answers come from `handler`, for every
    method (the request's body, if any, read into `request.body`); HTTPS with `tls` (an
    ssl.SSLContext for the server: SDKs that send tokens only over TLS)."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.handler: Route = lambda request: (404, {}, b"no handler")
        self.paths: list[str] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out as written: Nagle would hold the body until the
            # client acknowledges the headers, which it delays (40 ms a request on Linux)
            disable_nagle_algorithm = True

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                with outer._lock:
                    outer.paths.append(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                self.body = self.rfile.read(length) if length else b""
                status, headers, body = outer.handler(self)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if "Content-Length" not in headers:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = do_GET  # noqa: N815

            def log_message(self, *args) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True,
                                                 do_handshake_on_connect=False)
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        # serve_forever looks for a shutdown every 0.05 s (0.5 s by default: each close)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> Loopback:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def loopback() -> Iterator[Loopback]:
    with Loopback() as server:
        yield server


@pytest.fixture()
def azure_prices(loopback: Loopback, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """The loopback Retail Prices API, with the collector pointed at it."""
    from price_collectors.azure import ENV_URL
    from tests.price_collectors.azure_fake import PATH, RetailPrices

    server = RetailPrices(loopback.url)
    loopback.handler = server
    monkeypatch.setenv(ENV_URL, loopback.url + PATH)
    return server
