"""A job's secrets on Compute Engine (launchers.cloud_secrets): Secret Manager secrets
costsched-<job>-<key>-<NAME> of the project, <key> naming the launch attempt, labelled
with the job and that key. The instance reads each (its service account needs
roles/secretmanager.secretAccessor, and roles/secretmanager.admin or a role with
secretmanager.secrets.delete to delete them once read; without it they go when the
launcher ends the instance) through the REST API with the token of its metadata server.

Spoken to through Secret Manager's REST API v1 with the launcher's credentials
(google.auth's AuthorizedSession): no other client library is needed."""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from launchers import cloud_secrets
from launchers.base import TAG_JOB, Instance, LaunchSpec

DEFAULT_API = "https://secretmanager.googleapis.com"
TIMEOUT = 60.0
log = logging.getLogger("costsched.gcp_secrets")


def secret_id(job_id: int, attempt: str, name: str) -> str:
    """A secret's id (letters, digits, '-', '_'; a secret's name is an environment name)."""
    return f"costsched-{int(job_id)}-{cloud_secrets.key(job_id, attempt)}-{name}"


class SecretManager:
    def __init__(self, project: str, session: Any = None, api: str = DEFAULT_API) -> None:
        """`session`: a requests-like session that authorizes its calls (by default an
        AuthorizedSession of the application default credentials)."""
        self.project, self.api, self._session = project, api.rstrip("/"), session

    @property
    def session(self) -> Any:
        if self._session is None:
            from google.auth.transport.requests import AuthorizedSession

            from costsched.clouds import gcp as gcp_cloud

            credentials, _ = gcp_cloud.credentials_and_project(self.project)
            self._session = AuthorizedSession(credentials)
        return self._session

    def _call(self, method: str, path: str, *, body: dict | None = None,
              params: dict | None = None, absent: tuple[int, ...] = ()) -> dict:
        """One call; {} when its status is one of `absent` (409 exists, 404 gone)."""
        answer = self.session.request(method, f"{self.api}/v1/{path}", json=body,
                                      params=params, timeout=TIMEOUT)
        if answer.status_code in absent:
            return {}
        if answer.status_code >= 400:
            try:
                message = str(answer.json()["error"]["message"])
            except (ValueError, KeyError, TypeError):
                message = ""
            # the path and Google's message only: a request's body may hold a secret
            raise RuntimeError(f"gcp Secret Manager: {method} {path}: HTTP "
                               f"{answer.status_code} {' '.join(message.split())}".rstrip())
        return answer.json() if answer.content else {}

    def put(self, spec: LaunchSpec) -> dict[str, str]:
        """The job's secrets, one secret each; {name: the secret's resource name}."""
        refs = {}
        labels = {TAG_JOB: str(spec.job_id),
                  cloud_secrets.TAG_KEY: cloud_secrets.key(spec.job_id, spec.attempt)}
        for name in spec.secret_names:
            sid = secret_id(spec.job_id, spec.attempt, name)
            resource = f"projects/{self.project}/secrets/{sid}"
            self._call("POST", f"projects/{self.project}/secrets", params={"secretId": sid},
                       body={"replication": {"automatic": {}}, "labels": labels},
                       absent=(409,))  # made before a crash: a version is added again
            data = base64.b64encode(spec.envs[name].encode("utf-8")).decode("ascii")
            self._call("POST", f"{resource}:addVersion", body={"payload": {"data": data}})
            refs[name] = resource
        return refs

    def _listed(self, wanted: str) -> list[dict]:
        found: list[dict] = []
        token = ""
        while True:
            params = {"filter": wanted, **({"pageToken": token} if token else {})}
            page = self._call("GET", f"projects/{self.project}/secrets", params=params)
            found += page.get("secrets", [])
            token = page.get("nextPageToken", "")
            if not token:
                return found

    def _delete(self, names: list[str]) -> list[str]:
        for name in names:
            self._call("DELETE", name, absent=(404,))
        return names

    def delete(self, job_id: int, attempt: str) -> list[str]:
        """Delete the attempt's secrets (none left: nothing done); their names."""
        return self.delete_key(cloud_secrets.key(job_id, attempt))

    def delete_key(self, key: str) -> list[str]:
        """Delete the secrets of the attempt `key` (`cloud_secrets.key`); their names."""
        return self._delete(sorted(s["name"] for s in self._listed(
            f"labels.{cloud_secrets.TAG_KEY}={key}")))

    def sweep(self, live: Iterable[Instance], now: float | None = None) -> list[str]:
        """Delete the secrets of attempts with no live instance among `live`, older than
        SWEEP_AFTER_SECONDS; their names."""
        keys = cloud_secrets.live_keys(live)
        now = time.time() if now is None else now
        old = []
        for secret in self._listed(f"labels.{cloud_secrets.TAG_KEY}:*"):
            key = (secret.get("labels") or {}).get(cloud_secrets.TAG_KEY, "")
            made = secret.get("createTime", "")
            try:
                age = now - datetime.fromisoformat(made.replace("Z", "+00:00")).timestamp()
            except ValueError:
                age = float("inf")
            if key not in keys and age > cloud_secrets.SWEEP_AFTER_SECONDS:
                old.append(secret["name"])
        if old:
            log.info("deleted %d leftover secrets", len(old))
        return self._delete(sorted(old))
