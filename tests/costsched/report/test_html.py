"""The HTML cost report: self-contained and escaped, and rendered by a real headless
Chromium (Debian's `chromium`, installed by scripts/install-chromium.sh in CI) with its
figures decoded, its tables present, no console message, and a screenshot that is not blank."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html import escape
from pathlib import Path

import pytest
from matplotlib.image import imread

from costsched.report import build
from costsched.report.html import render, write
from costsched.store import PriceStore
from tests.costsched.report.scenario import BETA, EAST, NOW, at, fill

# Counts the images that decoded, once the page has loaded (read back with --dump-dom).
PROBE = ('<script>window.addEventListener("load", () => { const all = [...document.images];'
         ' document.title = "decoded " + all.filter(i => i.complete && i.naturalWidth > 0)'
         '.length + "/" + all.length; });</script>')


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("COSTSCHED_REQUIRE_CHROMIUM") == "1" or os.environ.get("CI"):
        pytest.fail("chromium is not installed (scripts/install-chromium.sh installs it)")
    pytest.skip("chromium is not installed: run scripts/install-chromium.sh "
                "(CI sets COSTSCHED_REQUIRE_CHROMIUM=1 and installs it)")


def run_chromium(page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless Chromium on `page`, its console messages logged to stderr."""
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-background-networking", "--disable-component-update",
               "--no-first-run", "--disable-sync", f"--user-data-dir={tmp / 'profile'}",
               "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
               "--window-size=1280,2000", *args, page.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def probed(page: Path, tmp: Path) -> tuple[str, str]:
    """The page's DOM after load (with the image probe added) and Chromium's stderr."""
    copy = tmp / f"probed-{page.name}"
    copy.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    done = run_chromium(copy, tmp, "--dump-dom")
    return done.stdout, done.stderr


@pytest.fixture()
def report_file(store: PriceStore, tmp_path: Path) -> Path:
    fill(store)
    return write(build(store, now=at(NOW)), tmp_path / "report.html")


def test_the_report_renders_in_chromium(report_file: Path, tmp_path: Path) -> None:
    dom, stderr = probed(report_file, tmp_path)
    assert "<title>decoded 3/3</title>" in dom  # three figures, every one decoded
    # six of spend, one of measured speed (no plans kept); under four, their other columns
    # (the days' and the speeds' ids, the egress's clouds, the moves' prices as decided)
    assert dom.count("<table>") - dom.count("<details>") == 7 and dom.count("<details>") == 4
    assert "beta &lt;b&gt;[red]x&lt;/b&gt;" in dom and "<b>[red]" not in dom
    assert console_messages(stderr) == []

    shot = tmp_path / "report.png"
    done = run_chromium(report_file, tmp_path, f"--screenshot={shot}")
    assert console_messages(done.stderr) == []
    pixels = imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1280)
    assert float(pixels.std()) > 0.05  # not a blank page
    assert float((pixels.min(axis=2) < 0.9).mean()) > 0.02  # ink on a good part of it


def test_the_browser_checks_catch_a_broken_page(tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text('<html><body><script>console.error("boom")</script>'
                      '<img src="data:image/png;base64,AAAA"></body></html>')
    dom, stderr = probed(broken, tmp_path)
    assert "<title>decoded 0/1</title>" in dom
    assert any('"boom"' in line for line in console_messages(stderr))
    blank = tmp_path / "blank.html"
    blank.write_text("<html><body></body></html>")
    shot = tmp_path / "blank.png"
    run_chromium(blank, tmp_path, f"--screenshot={shot}")
    assert float(imread(shot)[..., :3].std()) < 0.01


def test_the_file_is_self_contained_and_escaped(store: PriceStore) -> None:
    fill(store)
    text = render(build(store, now=at(NOW)))
    assert not re.search(r"(src|href)=\"(?!data:)", text)  # nothing fetched from elsewhere
    assert "http://" not in text and "https://" not in text
    assert text.count('src="data:image/png;base64,') == 3
    assert BETA not in text and "beta &lt;b&gt;[red]x&lt;/b&gt;" in text
    assert "$7.20" in text  # alpha's spend, as the table shows it


def test_an_empty_report_still_renders(store: PriceStore) -> None:
    text = render(build(store))
    assert text.count('src="data:image/png;base64,') == 3
    assert "none" in text


def test_a_dollar_in_a_job_name_is_no_mathtext(store: PriceStore) -> None:
    name = r"cost $\sqrt{$"  # matplotlib's mathtext cannot parse it
    job_id = store.jobs.create(name, {"spec": {"name": "x", "steps": 10,
                                               "throughputs": {"V100": 1.0}}}, 10, at=at(0))
    store.jobs.place(job_id, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance="i")
    text = render(build(store, now=at(2)))
    assert escape(name) in text


def test_a_missing_browser_skips_only_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("COSTSCHED_REQUIRE_CHROMIUM", raising=False)
    with pytest.raises(pytest.skip.Exception, match="install-chromium.sh"):
        chromium()
    monkeypatch.setenv("COSTSCHED_REQUIRE_CHROMIUM", "1")
    with pytest.raises(pytest.fail.Exception, match="not installed"):
        chromium()


def test_a_plot_too_small_for_its_layout_is_drawn_without_a_warning() -> None:
    """matplotlib warns (with its source line) where a figure's axes collapse; the report
    draws the plot as it is, and the user reads only the report's own lines."""
    import warnings

    from matplotlib.figure import Figure

    from costsched.report.html import _png

    fig = Figure(figsize=(1, 0.3), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title("a long title here")
    ax.set_xlabel("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _png(fig)
