"""The Compute Engine launcher's readiness: a login that expired or was revoked, or a token
service out of reach, refuses a launch in one line (what to do included) before anything
is stored or inserted; credentials holding a token are not asked again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.cloud.compute_v1")
from google.auth import credentials as auth_credentials  # noqa: E402
from google.auth import exceptions  # noqa: E402

from costsched.clouds import gcp as gcp_cloud  # noqa: E402
from costsched.clouds.base import NotSetUp  # noqa: E402
from costsched.model import InvalidInput  # noqa: E402
from costsched.service import jobs as service  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers.gcp import GcpLauncher  # noqa: E402
from tests.launchers.test_gcp import FakeInstances  # noqa: E402

REVOKED = exceptions.RefreshError(
    "invalid_grant: Token has been expired or revoked.",
    {"error": "invalid_grant", "error_description": "Token has been expired or revoked."})


class Login(auth_credentials.Credentials):
    """A gcloud user login: no token until refreshed; `fails` is what refreshing raises."""

    def __init__(self, fails: Exception | None = None) -> None:
        super().__init__()
        self.fails, self.refreshed = fails, 0

    def refresh(self, request: Any) -> None:
        assert callable(request)  # the bounded transport
        self.refreshed += 1
        if self.fails is not None:
            raise self.fails
        self.token = "ya29.a-token"


class ServiceAccountKey(Login, auth_credentials.Scoped):
    """A service account key: it needs scopes before it gives a token."""

    def __init__(self, scopes: Any = None) -> None:
        super().__init__()
        self._scopes, self.copies = scopes, []

    @property
    def requires_scopes(self) -> bool:
        return not self._scopes

    def with_scopes(self, scopes: Any, default_scopes: Any = None) -> ServiceAccountKey:
        copy = ServiceAccountKey(scopes)
        self.copies.append(copy)
        return copy


def test_a_revoked_login_is_one_line_saying_what_to_do() -> None:
    with pytest.raises(NotSetUp) as refused:
        gcp_cloud.check_token(Login(REVOKED))
    assert str(refused.value) == (
        "gcp: the Google credentials were refused (invalid_grant: Token has been expired or "
        "revoked.): run `gcloud auth application-default login` or set "
        "GOOGLE_APPLICATION_CREDENTIALS")


def test_a_token_service_out_of_reach_says_so_not_to_log_in_again() -> None:
    with pytest.raises(NotSetUp, match=r"^gcp: Google's token service was not reached "
                                       r"\(connection refused\): check this machine's "
                                       r"network, then launch again$"):
        gcp_cloud.check_token(Login(exceptions.TransportError("connection refused")))


def test_credentials_with_a_token_are_not_asked_and_a_key_is_scoped_first() -> None:
    login = Login()
    gcp_cloud.check_token(login)
    gcp_cloud.check_token(login)  # the token it holds now is used by the calls that follow
    assert login.refreshed == 1
    key = ServiceAccountKey()
    gcp_cloud.check_token(key)
    [scoped] = key.copies
    assert key.refreshed == 0 and scoped.refreshed == 1
    assert scoped._scopes == [gcp_cloud.CLOUD_PLATFORM]


def test_a_launch_with_a_revoked_login_stores_and_inserts_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    login = Login(REVOKED)
    monkeypatch.setattr(gcp_cloud, "credentials_and_project",
                        lambda project=None: (login, "proj"))
    fake = FakeInstances()
    launcher = GcpLauncher(instances_client=fake)  # this machine's credentials
    store = PriceStore(str(tmp_path / "store.sqlite"))
    job = tmp_path / "job.yaml"
    job.write_text("name: j\nrun: 'true'\nthroughputs: {V100: 1.0}\nsteps: 100\n")
    with pytest.raises(InvalidInput, match=r"^gcp: the Google credentials were refused "
                                           r"\(invalid_grant: ") as refused:
        service.launch(store, job, launcher=launcher)
    assert "\n" not in str(refused.value)
    assert store.jobs.records() == [] and fake.inserted == []
    store.dispose()
    # A launcher given its client by its caller is the caller's to vouch for.
    GcpLauncher(project="proj", instances_client=fake).check_ready()
