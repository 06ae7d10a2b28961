"""Every address the dashboard does not serve gets one not-found page, as a job that is not
there does: HTML with the pages there are and a link home; the API answers JSON."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient


@pytest.mark.parametrize("path", ["/jobs", "/nosuch", "/spend/x", "/static/nosuch.css"])
def test_an_unknown_page_is_the_html_not_found_page_with_a_link_home(
        client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 404
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "<h1>Not found</h1>" in page.text and '<a href="/">' in page.text
    assert f"{path}: no such page: the dashboard&#39;s pages are / (the jobs), /jobs/JOB " \
           "(one job), /spend and /prices" in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'self'")


def test_a_job_not_there_gets_the_same_page(client: TestClient) -> None:
    job = client.get("/jobs/999")
    unknown = client.get("/nosuch")
    assert job.status_code == unknown.status_code == 404

    def frame(text: str) -> str:  # the page less its message
        return re.sub(r'<p class="error">.*?</p>', "", text)

    assert frame(job.text) == frame(unknown.text)
    assert "job 999: no such job in the store" in job.text


def test_a_path_is_shown_as_text_not_markup(client: TestClient) -> None:
    page = client.get("/<b>x</b>")
    assert page.status_code == 404 and "<b>x</b>" not in page.text
    assert "&lt;b&gt;x&lt;/b&gt;" in page.text


def test_the_api_keeps_its_json_errors(client: TestClient) -> None:
    for path in ("/api/nosuch", "/api/jobs/999"):
        api = client.get(path)
        assert api.status_code == 404 and api.headers["content-type"] == "application/json"
        assert list(api.json()) == ["error"], path
