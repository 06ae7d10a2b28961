"""A real headless Chromium driven over the DevTools protocol through a pipe
(--remote-debugging-pipe: JSON messages separated by NUL bytes on file descriptors 3 and 4),
with the standard library only: open a page at a width, evaluate JavaScript in it, wait for
a condition, collect its console errors and uncaught exceptions, take a screenshot."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.costsched.report.test_html import chromium

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-pipe"]


def _onto_3_and_4(read: int, write: int) -> None:
    """In the child: `read` as fd 3, `write` as fd 4 (copied out of the way first, as either
    may be 3 or 4 already)."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (read, write)]
    os.dup2(high[0], 3)
    os.dup2(high[1], 4)


class Browser:
    def __init__(self, profile: Path) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Chromium reads commands on fd 3 and writes on fd 4.
        self.process = subprocess.Popen(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=lambda: _onto_3_and_4(to_chrome_r, from_chrome_w))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next = 0
        self._replies: dict[int, dict] = {}
        self.problems: list[str] = []  # console errors and warnings, uncaught exceptions
        self._ready = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target,
                                                           "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=True)

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                return
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                message = json.loads(raw)
                self._note(message)
                with self._ready:
                    if "id" in message:
                        self._replies[message["id"]] = message
                    self._ready.notify_all()

    def _note(self, message: dict) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "warning",
                                                                        "assert"):
            self.problems.append(f"console.{params['type']}: " + " ".join(
                str(a.get("value", a.get("description", ""))) for a in params["args"]))
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.problems.append("exception: " + details.get("exception", {}).get(
                "description", details.get("text", "")))
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            entry = params["entry"]
            self.problems.append(f"log {entry['level']}: {entry['text']} {entry.get('url', '')}")

    def send(self, method: str, params: dict | None = None, *, session: bool = False,
             timeout: float = 60.0) -> dict:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._ready:
            while self._next not in self._replies:
                left = deadline - time.monotonic()
                assert left > 0, f"Chromium did not answer {method}"
                self._ready.wait(left)
            reply = self._replies.pop(self._next)
        assert "error" not in reply, f"{method}: {reply['error']}"
        return reply["result"]

    def open(self, url: str, width: int = 1280, height: int = 900) -> None:
        """Load `url` in a window `width` CSS pixels wide (a phone's below 700)."""
        self.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1,
            "mobile": width < 700}, session=True)
        self.send("Page.navigate", {"url": url}, session=True)
        self.wait_for("document.readyState === 'complete' && !!document.getElementById('live')")

    def leave(self) -> None:
        """Go to a blank page: the page's connections (its live updates) close."""
        self.send("Page.navigate", {"url": "about:blank"}, session=True)

    def js(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True}, session=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60.0) -> Any:
        """The value of `expression` once it is truthy (polled every 0.05 s; while a page
        loads, an expression that throws is asked again)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.js(expression)
            except AssertionError:
                value = None
            if value:
                return value
            assert time.monotonic() < deadline, f"still false after {timeout:g} s: {expression}"
            time.sleep(0.05)

    def screenshot(self, path: Path, full: bool = True) -> Path:
        """The whole page (its full height; else the window) as a PNG."""
        height = int(self.js("document.documentElement.scrollHeight" if full
                             else "window.innerHeight"))
        width = int(self.js("window.innerWidth"))
        shot = self.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}},
            session=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self.send("Browser.close", timeout=10)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_chrome)
