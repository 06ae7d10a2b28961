"""The notification hook: a real subprocess and a loopback HTTP server receive the JSON;
failing hooks are one warning each, never an exception."""

from __future__ import annotations

import base64
import json
import logging
import socket
import sys
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from costsched.config import Config
from costsched.model import InvalidInput
from costsched.notify import notify


def hooks(command: list[str] | None = None, webhook: str | None = None,
          db: str | None = None) -> Config:
    return Config.model_validate({"db": db, "notify": {"command": command, "webhook": webhook}})


class Received:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.status = 200


@pytest.fixture()
def server() -> Iterator[tuple[str, Received]]:
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.requests.append({"path": self.path, "body": body,
                                      "headers": dict(self.headers)})
            self.send_response(received.status)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", received
    httpd.shutdown()
    httpd.server_close()


def test_command_receives_the_json_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "got.json"
    script = "import sys, os; open(sys.argv[1], 'wb').write(sys.stdin.buffer.read())"
    config = hooks(command=[sys.executable, "-c", script, str(out)])
    before = datetime.now(timezone.utc).replace(microsecond=0)
    result = notify(config, "migration", job=7, cost_usd=1.25, to="aws:us-east-1a:p3.2xlarge",
                    saving=float("nan"))
    assert result.command is True and result.webhook is None and result.ok
    doc = json.loads(out.read_bytes())
    assert list(doc) == ["event", "at", "job", "cost_usd", "to", "saving"]
    assert doc["saving"] is None
    assert (doc["event"], doc["job"], doc["cost_usd"], doc["to"]) == (
        "migration", 7, 1.25, "aws:us-east-1a:p3.2xlarge")
    at = datetime.fromisoformat(doc["at"].replace("Z", "+00:00"))
    assert before <= at <= datetime.now(timezone.utc)


def test_command_runs_without_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    config = hooks(command=[sys.executable, "-c", "import sys; sys.exit(0)",
                            f"; touch {marker}"])
    assert notify(config, "failure", job=1).command is True
    assert not marker.exists()


def test_webhook_receives_the_post(server) -> None:
    url, received = server
    result = notify(hooks(webhook=url + "/hook"), "recovery", job=3, reason="preempted")
    assert result.webhook is True and result.command is None
    [request] = received.requests
    assert request["path"] == "/hook"
    assert request["headers"]["Content-Type"] == "application/json"
    doc = json.loads(request["body"])
    assert (doc["event"], doc["job"], doc["reason"]) == ("recovery", 3, "preempted")


def test_webhook_credentials_become_basic_auth_and_never_the_body(server) -> None:
    url, received = server
    secret_url = url.replace("http://", "http://bot:s3cret@") + "/hook"
    db = "postgresql+psycopg://costsched:dbpass@db.example/costsched"
    result = notify(hooks(webhook=secret_url, db=db), "budget", job=2,
                    store=db, checkpoint="s3://key:sekrit@bucket/ckpt")
    assert result.webhook is True
    [request] = received.requests
    assert request["headers"]["Authorization"] == "Basic " + base64.b64encode(
        b"bot:s3cret").decode()
    body = request["body"].decode()
    for secret in ("s3cret", "dbpass", "sekrit", "db.example"):
        assert secret not in body
    assert json.loads(body)["checkpoint"] == "s3://key:***@bucket/ckpt"


def test_both_hooks_are_called(server, tmp_path: Path) -> None:
    url, received = server
    out = tmp_path / "got.json"
    script = "import sys; open(sys.argv[1], 'wb').write(sys.stdin.buffer.read())"
    config = hooks(command=[sys.executable, "-c", script, str(out)], webhook=url)
    result = notify(config, "failure", job=5)
    assert (result.command, result.webhook) == (True, True)
    assert json.loads(out.read_bytes())["event"] == "failure"
    assert json.loads(received.requests[0]["body"])["event"] == "failure"


def test_failing_command_is_one_warning(caplog, tmp_path: Path) -> None:
    config = hooks(command=[sys.executable, "-c",
                            "import sys; print('boom\\nlast words', file=sys.stderr); "
                            "sys.exit(3)"])
    with caplog.at_level(logging.WARNING, logger="costsched.notify"):
        result = notify(config, "failure", job=1)
    assert result.command is False and not result.ok
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert "\n" not in message
    assert "exit status 3" in message and "last words" in message


def test_missing_command_is_one_warning(caplog, tmp_path: Path) -> None:
    config = hooks(command=[str(tmp_path / "no-such-hook")])
    with caplog.at_level(logging.WARNING, logger="costsched.notify"):
        result = notify(config, "migration", job=1)
    assert result.command is False
    [record] = caplog.records
    assert "no-such-hook" in record.getMessage()


def test_unreachable_and_failing_webhooks_are_one_warning(caplog, server) -> None:
    url, received = server
    received.status = 500
    with caplog.at_level(logging.WARNING, logger="costsched.notify"):
        result = notify(hooks(webhook=url.replace("http://", "http://u:pw@")), "budget")
    assert result.webhook is False
    [record] = caplog.records
    assert "HTTP 500" in record.getMessage() and "pw" not in record.getMessage()
    caplog.clear()
    with socket.socket() as sock:  # a port nobody listens on any more
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with caplog.at_level(logging.WARNING, logger="costsched.notify"):
        result = notify(hooks(webhook=f"http://127.0.0.1:{port}/x"), "budget")
    assert result.webhook is False
    [record] = caplog.records
    assert record.levelno == logging.WARNING and "\n" not in record.getMessage()


def test_unknown_event_is_refused() -> None:
    with pytest.raises(InvalidInput, match="event 'moved': expected one of migration"):
        notify(hooks(), "moved")


def test_no_hooks_configured_does_nothing() -> None:
    result = notify(hooks(), "migration", job=1)
    assert (result.command, result.webhook, result.ok) == (None, None, True)


def test_the_document_masks_fields_named_like_secrets_and_tokens_in_text() -> None:
    from costsched.notify import document

    body = json.loads(document(hooks(), "failure", api_key="k-0123456789",
                               detail="POST https://h.example/x?token=abc failed: "
                                      "Authorization: Bearer zzz-1234567"))
    assert body["api_key"] == "***"
    assert body["detail"] == ("POST https://h.example/x?token=*** failed: "
                              "Authorization: Bearer ***")
