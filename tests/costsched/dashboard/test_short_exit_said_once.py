"""A job that exited 0 short of its declared steps is said so once on each page: not again
in its deadline line, and not in parentheses inside parentheses; a job that ended has no
checkpoint published, not 'none published yet'."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from costsched.store import PriceStore
from tests.costsched.dashboard.test_short_exit_listed import SAID, ended_job
from tests.costsched.report.scenario import EAST, observe


def test_a_short_exit_is_said_once_on_each_page(store: PriceStore, client: TestClient,
                                                tmp_path: Path) -> None:
    observe(store, EAST, [(-10, 1.0)])
    (tmp_path / "ck").mkdir()
    job = ended_job(store, "short", "succeeded", str(tmp_path / "ck"))
    listed = " ".join(client.get("/").text.split())
    assert listed.count("declared steps") == 1 and SAID in listed, listed
    assert "it ended " in listed and " its deadline (" in listed  # when it ended
    page = " ".join(client.get(f"/jobs/{job}").text.split())
    assert page.count("declared steps") == 1 and SAID in page, page
    assert "(exited 0" not in page and "2,400 (" not in page.replace(SAID, "")
    assert "none published" in page and "none published yet" not in page


def test_a_stopped_job_has_none_published_yet(store: PriceStore, client: TestClient,
                                              tmp_path: Path) -> None:
    """A stopped job can be started again (and then publish one): 'yet'."""
    observe(store, EAST, [(-10, 1.0)])
    (tmp_path / "ck").mkdir()
    job = ended_job(store, "paused", "stopped", str(tmp_path / "ck"))
    assert "none published yet" in " ".join(client.get(f"/jobs/{job}").text.split())
