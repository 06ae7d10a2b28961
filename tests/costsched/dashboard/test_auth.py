"""Who may read and act: another address than loopback asks every page for the token;
actions are served only when enabled, only with the token, and a form only with its CSRF
value from this server's own page. The token is never in a page, a cookie or a URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.dashboard.auth import COOKIE, Access, check_token, is_loopback
from costsched.store import PriceStore
from tests.costsched.dashboard.conftest import app_client, running

TOKEN = "s3cret-token-for-the-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.0.1", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("0.0.0.0", False), ("192.0.2.10", False), ("::", False),
    ("example.org", False)])
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_token_is_needed_off_loopback_and_for_actions() -> None:
    check_token(None, host="127.0.0.1", actions=False, source="env")  # read-only, local
    with pytest.raises(ValueError, match="0.0.0.0: serving another address than loopback "
                                         "needs a token"):
        check_token(None, host="0.0.0.0", actions=False, source="env")
    with pytest.raises(ValueError, match="--actions: .* need a token"):
        check_token(None, host="127.0.0.1", actions=True, source="env")
    with pytest.raises(ValueError, match="at least 16 characters"):
        check_token("short", host="127.0.0.1", actions=True, source="env")
    check_token(TOKEN, host="0.0.0.0", actions=True, source="env")


def test_off_loopback_every_page_asks_for_the_token(store: PriceStore) -> None:
    client = app_client(store, Access(TOKEN, reads_need_token=True))
    assert client.get("/api/jobs").status_code == 401
    assert client.get("/api/jobs", headers={"Authorization": "Bearer wrong"}
                      ).status_code == 401
    assert client.get("/api/jobs", headers=BEARER).status_code == 200
    page = client.get("/spend", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/login?next=/spend"
    assert client.get("/static/dashboard.css").status_code == 200  # the sign-in page's look

    refused = client.post("/login", data={"token": "wrong"}, follow_redirects=False)
    assert refused.status_code == 401 and COOKIE not in refused.cookies
    signed = client.post("/login?next=/spend", data={"token": TOKEN}, follow_redirects=False)
    assert signed.status_code == 303 and signed.headers["location"] == "/spend"
    cookie = signed.cookies[COOKIE]
    assert TOKEN not in cookie and "httponly" in signed.headers["set-cookie"].lower()
    assert "samesite=strict" in signed.headers["set-cookie"].lower()
    page = client.get("/spend")
    assert page.status_code == 200 and TOKEN not in page.text


def test_sign_in_goes_only_to_this_server(store: PriceStore) -> None:
    client = app_client(store, Access(TOKEN, reads_need_token=True))
    away = client.post("/login?next=//evil.example/x", data={"token": TOKEN},
                       follow_redirects=False)
    assert away.headers["location"] == "/"
    forged = client.post("/login", data={"token": TOKEN}, follow_redirects=False,
                         headers={"Origin": "http://evil.example"})
    assert forged.status_code == 401


def test_actions_are_off_unless_enabled(store: PriceStore, instances: Path) -> None:
    job = running(store, "busy")
    client = app_client(store, Access(TOKEN, actions=False))
    answer = client.post(f"/api/jobs/{job}/stop", headers=BEARER)
    assert answer.status_code == 403 and "--actions" in answer.json()["error"]
    page = client.get(f"/jobs/{job}")
    assert 'action="/jobs/' not in page.text  # no action forms
    assert store.jobs.get(job).state == "running"


def test_an_api_action_needs_the_token(store: PriceStore, instances: Path) -> None:
    job = running(store, "busy")
    client = app_client(store, Access(TOKEN, actions=True))
    assert client.post(f"/api/jobs/{job}/stop").status_code == 401
    assert client.post(f"/api/jobs/{job}/stop", headers={"Authorization": "Bearer x"}
                       ).status_code == 401
    assert store.jobs.get(job).state == "running"
    bad = client.post(f"/api/jobs/{job}/migrate", headers=BEARER, json={})
    assert bad.status_code == 400 and "to:" in bad.json()["error"]
    stopped = client.post(f"/api/jobs/{job}/stop", headers=BEARER)
    assert stopped.status_code == 200
    assert stopped.json() == {"id": job, "name": "busy", "state": "stopped"}  # stop --json
    assert store.jobs.get(job).state == "stopped"


def test_a_form_action_needs_sign_in_and_its_csrf_value(store: PriceStore,
                                                        instances: Path) -> None:
    job = running(store, "busy")
    access = Access(TOKEN, actions=True)
    client = app_client(store, access)
    page = client.get(f"/jobs/{job}").text
    assert f'action="/jobs/{job}/stop"' in page and access.csrf in page and TOKEN not in page

    anonymous = client.post(f"/jobs/{job}/stop", data={"csrf": access.csrf})
    assert anonymous.status_code == 401 and "sign in" in anonymous.text
    client.post("/login", data={"token": TOKEN})
    assert client.post(f"/jobs/{job}/stop", data={"csrf": "forged"}).status_code == 403
    elsewhere = client.post(f"/jobs/{job}/stop", data={"csrf": access.csrf},
                            headers={"Origin": "http://evil.example"})
    assert elsewhere.status_code == 403
    assert store.jobs.get(job).state == "running"

    done = client.post(f"/jobs/{job}/stop", data={"csrf": access.csrf},
                       headers={"Origin": "http://127.0.0.1:8765"}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == f"/jobs/{job}"
    assert store.jobs.get(job).state == "stopped"
