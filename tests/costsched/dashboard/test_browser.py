"""`costsched dashboard` as a user meets it: a real server process over a store with a job
running on the local launcher (a real subprocess), pages rendered by a real headless
Chromium at desktop and phone widths with their charts drawn and no console message, a
preemption and recovery written by another process appearing without a reload, and actions
that need the token.

Screenshots go to the test's folder; with COSTSCHED_DASHBOARD_SHOTS=DIR they are also
copied there (docs/ keeps the ones its dashboard page shows)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from matplotlib.image import imread

from costsched.service import jobs as service
from costsched.service.prices import import_prices
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.cleanup import stop_unless_ended
from tests.costsched.dashboard.browser import Browser

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
TOKEN = "browser-test-token-0123456789"
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}


def _drawn(count: int) -> str:
    return f"document.querySelectorAll('canvas[data-drawn]').length >= {count}"


@pytest.fixture()
def running_job(tmp_path: Path) -> Iterator[tuple[str, int, Path]]:
    """A store with the local demo's prices and its job running for long (40,000 steps of
    2 s: the step it reports changes seldom, so an open page is not re-rendered all the
    time for it; a test's change is what updates a page), launched on the local launcher,
    labelled team=vision and in budget 'vision': (store path, job id, instances folder)."""
    db = tmp_path / "store.sqlite"
    instances = tmp_path / "instances"
    import_prices(str(db), [EXAMPLES / "demo" / "prices-before.csv"], partial=False)
    spec = yaml.safe_load((EXAMPLES / "demo" / "train.yaml").read_text())
    spec.update(workdir=str(EXAMPLES), steps=40000,
                run="python train.py --steps 40000 --step-seconds 2 --checkpoint-every 1",
                checkpoint={"location": str(tmp_path / "checkpoints"), "size_gb": 0.1,
                            "interval_minutes": 30},
                constraints={**spec["constraints"], "budget": 900, "budget_name": "vision"},
                task={"labels": {"team": "vision"}})
    (tmp_path / "train.yaml").write_text(yaml.safe_dump(spec))
    store = PriceStore(str(db))
    launcher = LocalLauncher(instances, poll_seconds=0.2)
    [job] = service.launch(store, [tmp_path / "train.yaml"], launcher=launcher,
                           wait_seconds=60)
    assert store.jobs.get(job.id).state == "running"
    yield str(db), job.id, instances
    stop_unless_ended(store, launcher, job.id)
    store.dispose()


class Server:
    """`costsched dashboard --port 0` in a process of its own; `url` is the line it prints."""

    def __init__(self, db: str, instances: Path, *args: str, env: dict | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "costsched.cli", "dashboard", "--port", "0", "--poll",
             "0.5", "--db", db, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "COSTSCHED_INSTANCES": str(instances), **(env or {})})
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(self.process.stdout.readline()))
        reader.start()
        reader.join(120)
        assert lines and lines[0].startswith("costsched dashboard: http://"), (
            lines, self.process.stderr.read() if self.process.poll() is not None else "")
        self.url = lines[0].split()[2]

    def get(self, path: str, headers: dict | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url + path.lstrip("/"), headers=headers or {})
        with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 - loopback
            return answer.status, answer.read()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def _chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One Chromium for the module's tests (each starts without cookies or problems)."""
    opened = Browser(tmp_path_factory.mktemp("chromium") / "profile")
    yield opened
    opened.close()


@pytest.fixture()
def browser(_chromium: Browser) -> Browser:
    _chromium.send("Storage.clearCookies")
    _chromium.problems.clear()
    return _chromium


def keep(shot: Path) -> None:
    """A screenshot, not blank, copied where COSTSCHED_DASHBOARD_SHOTS says (if it does)."""
    pixels = imread(shot)[..., :3]
    assert float(pixels.std()) > 0.05  # not a blank page
    assert float((pixels.min(axis=2) < 0.9).mean()) > 0.02  # ink on a good part of it
    folder = os.environ.get("COSTSCHED_DASHBOARD_SHOTS")
    if folder:
        shutil.copy(shot, Path(folder) / shot.name)


def test_the_dashboard_shows_a_running_job_live(running_job, browser: Browser,
                                                tmp_path: Path) -> None:
    db, job, instances = running_job
    server = Server(db, instances)
    try:
        assert urlsplit(server.url).hostname == "127.0.0.1"  # loopback by default
        status, body = server.get("/api/jobs")
        jobs = json.loads(body)["jobs"]
        assert status == 200 and [(j["id"], j["name"], j["state"]) for j in jobs] == [
            (job, "demo-train", "running")]
        one = json.loads(server.get(f"/api/jobs/{job}")[1])
        [advice] = one["advice"]  # `migrate --dry-run`: staying, in dollars
        assert one["budget_usd"] == 900
        assert advice["stay_usd"] > 0
        # its own budget's forecast (`test_one_forecast`): its spend and the rest to come
        assert one["forecast_usd"] > one["job"]["cost_usd"]

        # Every page, at both widths: the job, its charts drawn, not a console message.
        pages = {"jobs": "", "job": f"jobs/{job}", "spend": "spend", "prices": "prices"}
        charts = {"jobs": 1, "job": 1, "spend": 3, "prices": 1}
        for width_name, (width, height) in WIDTHS.items():
            for name, path in pages.items():
                browser.open(server.url + path, width, height)
                browser.wait_for(_drawn(charts[name]))
                assert "demo-train" in browser.js("document.body.innerText") or name in (
                    "spend", "prices"), name
                keep(browser.screenshot(tmp_path / f"dashboard-{name}-{width_name}.png"))
                if name == "jobs":  # its spend, forecast and budget
                    row = browser.js(f"document.querySelector('tr[data-job=\"{job}\"]')"
                                     ".innerText")
                    assert "$900.00" in row and row.count("$") == 3, row
        assert browser.problems == []

        # The cloud takes the instance away; another process (status) recovers the job.
        browser.open(server.url, *WIDTHS["desktop"])
        browser.wait_for(_drawn(1))
        browser.js("window.notReloaded = true")
        row = f"document.querySelector('tr[data-job=\"{job}\"]')"
        assert browser.js(f"{row}.cells[9].innerText") == "0 / 0"
        [instance] = [i.id for i in LocalLauncher(instances).instances(job) if i.live]
        LocalLauncher(instances).preempt(instance)
        subprocess.run([sys.executable, "-m", "costsched.cli", "status", "--db", db],
                       check=True, capture_output=True, timeout=300,
                       env={**os.environ, "COSTSCHED_INSTANCES": str(instances)})
        browser.wait_for(f"{row} && {row}.cells[9].innerText === '0 / 1'", timeout=120)
        assert browser.js("window.notReloaded === true")  # updated in place
        assert int(browser.js("document.body.dataset.updates")) >= 1
        assert browser.js(f"{row}.cells[2].innerText") in ("running", "recovering")
        browser.wait_for(_drawn(1))

        # Filtered by label from the page's form: the filter is in the URL, to share.
        browser.js("document.querySelector('form.filters input[name=label]').value = "
                   "'team=vision'; document.querySelector('form.filters').submit()")
        browser.wait_for("location.search.includes('label=team%3Dvision') && "
                         f"!!{row}")
        browser.open(f"{server.url}?label=team%3Dnlp")
        assert browser.js(f"{row}") is None
        assert "No jobs match" in browser.js("document.body.innerText")
        browser.open(f"{server.url}?budget=vision")
        assert browser.js(f"!!{row}") and browser.js(
            "document.querySelector('form.filters input[name=budget]').value") == "vision"
        assert browser.problems == []
    finally:
        browser.leave()  # its live updates' stream ends: the server stops at once
        server.stop()


def test_actions_in_the_browser_need_the_token(running_job, browser: Browser) -> None:
    db, job, instances = running_job
    server = Server(db, instances, "--actions", env={"COSTSCHED_DASHBOARD_TOKEN": TOKEN})
    try:
        browser.open(f"{server.url}jobs/{job}")
        assert browser.js("document.querySelector('form[action$=\"/stop\"]') !== null")
        browser.js("document.querySelector('form[action$=\"/stop\"] button').click()")
        browser.wait_for("document.body.innerText.includes('sign in first')")
        store = PriceStore(db)
        assert store.jobs.get(job).state == "running"

        browser.open(f"{server.url}login?next=/jobs/{job}")
        browser.js(f"document.querySelector('input[name=token]').value = {TOKEN!r};"
                   "document.querySelector('form.login').submit()")
        browser.wait_for(f"location.pathname === '/jobs/{job}' && "
                         "!!document.querySelector('form[action$=\"/stop\"]')")
        assert TOKEN not in browser.js("document.documentElement.outerHTML + document.cookie")
        browser.js("document.querySelector('form[action$=\"/stop\"] button').click()")
        browser.wait_for("!!document.querySelector('h1 .state-stopped')")
        assert store.jobs.get(job).state == "stopped"
        store.dispose()
    finally:
        browser.leave()  # its live updates' stream ends: the server stops at once
        server.stop()
