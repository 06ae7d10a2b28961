"""A job's secrets on Azure (launchers.cloud_secrets): Key Vault secrets
costsched-<job>-<key>-<NAME> of the vault config azure.key_vault names, <key> naming the
launch attempt, tagged with the job, that key and the environment name they carry.

The launcher speaks to Key Vault through azure-keyvault-secrets, as its own identity (Key
Vault Secrets Officer: set, list, delete, purge, recover). The VM reads each secret at boot
with its managed identity (Key Vault Secrets User) through Key Vault's REST API with the
standard library, as Compute Engine instances read theirs: a token from the Instance
Metadata Service for the vault's audience, then Get Secret (`read_on_vm`). Its role reads
only: the launcher deletes the attempt's secrets when it ends the VM, and purges them, so
that the vault's soft delete does not keep their values for its retention days (where the
vault's purge protection forbids it, they stay deleted until then, and a launch that needs
the same name again recovers it first).

Key Vault's names are letters, digits and dashes, compared without case: an environment
name's '_' becomes '-', and a name with lower-case letters gets 8 hex digits of its own
so that HF_TOKEN and hf_token stay two secrets.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from launchers import cloud_secrets
from launchers.base import TAG_JOB, Instance, LaunchSpec

API_VERSION = "7.5"  # Key Vault's REST API, the launcher's and the VM's (pinned: one shape)
IMDS = "http://169.254.169.254"
IMDS_API_VERSION = "2018-02-01"
ENV_IMDS = "AZURE_POD_IDENTITY_AUTHORITY_HOST"  # azure-identity's: another metadata endpoint
TAG_ENV = "costsched-env"  # the environment name a secret carries
TIMEOUT = 30.0  # seconds for one call from the VM
TOKEN_WAIT = 90.0  # seconds the VM waits for its identity (IMDS answers 404/410 at first)
DELETE_WAIT = 60.0  # seconds a deletion is waited for before its purge
PROBE = "costsched-check"  # the one secret `costsched check` writes (no value of yours)
log = logging.getLogger("costsched.azure_secrets")


def secret_name(job_id: int, attempt: str, name: str) -> str:
    """The Key Vault name of the secret `name` of (job, attempt)."""
    readable = name.replace("_", "-")
    if any(c.islower() for c in name) or len(readable) > 80:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        readable = f"{readable[:80]}-{digest}"
    return f"costsched-{int(job_id)}-{cloud_secrets.key(job_id, attempt)}-{readable}"


def no_vault(name: str) -> str:
    """The refusal of a job with the secret `name` where no Key Vault is configured (worded
    so that costsched's redaction leaves it whole)."""
    return (f"secret {name} cannot reach an Azure VM without a Key Vault (a secret is never "
            "put in a VM's custom data): set azure.key_vault (a vault's name or URL) in the "
            "config")


def vault_resource(vault: str) -> str:
    """The token audience of the vault at URL `vault` (its cloud's Key Vault)."""
    host = (urllib.parse.urlsplit(vault).hostname or "").lower()
    from costsched.clouds.azure import KEY_VAULT_HOSTS

    for suffix in KEY_VAULT_HOSTS:
        if host.endswith(suffix):
            return "https://" + suffix.lstrip(".")
    return "https://" + KEY_VAULT_HOSTS[0].lstrip(".")


def said(exc: Exception) -> str:
    """An azure-core error in one line: its code and its message's first line (Key Vault's
    answers never echo a request's body, so no value is in it)."""
    error = getattr(exc, "error", None)
    code = str(getattr(error, "code", "") or getattr(exc, "status_code", "") or "")
    message = str(getattr(error, "message", None) or getattr(exc, "message", None)
                  or type(exc).__name__)
    text = " ".join(message.splitlines()[0].split())[:200] if message.strip() else ""
    return f"{code}: {text}" if code and not text.startswith(code) else text


class KeyVault:
    """The vault at `url`, as the launcher uses it. `credential`: azure-identity's (by default
    DefaultAzureCredential); `options` go to the SDK's client (a `transport`, timeouts...)."""

    def __init__(self, url: str, credential: Any = None, **options: Any) -> None:
        self.url = url.rstrip("/")
        self._credential, self._options = credential, options
        self._client: Any = None
        self._purge_refused = False

    @property
    def client(self) -> Any:  # azure.keyvault.secrets.SecretClient
        if self._client is None:
            from costsched.clouds.azure_sdk import key_vault_client

            self._client = key_vault_client(self.url, self._credential,
                                            api_version=API_VERSION, **self._options)
        return self._client

    def _errors(self) -> tuple[type[Exception], type[Exception], type[Exception]]:
        """(HttpResponseError, ResourceNotFoundError, ResourceExistsError) of azure-core."""
        from azure.core import exceptions

        return (exceptions.HttpResponseError, exceptions.ResourceNotFoundError,
                exceptions.ResourceExistsError)

    def put(self, spec: LaunchSpec) -> dict[str, str]:
        """The job's secrets, one Key Vault secret each; {name: the secret's name}.
        RuntimeError in one line (the vault, the secret's name, Key Vault's code) when one
        cannot be set."""
        http_error, _, exists = self._errors()
        key = cloud_secrets.key(spec.job_id, spec.attempt)
        refs = {}
        for name in spec.secret_names:
            ref = secret_name(spec.job_id, spec.attempt, name)
            tags = {TAG_JOB: str(spec.job_id), cloud_secrets.TAG_KEY: key, TAG_ENV: name}
            try:
                try:
                    self.client.set_secret(ref, spec.envs[name], tags=tags)
                except exists:  # deleted, kept by a soft delete not purged: back, then set
                    self.client.begin_recover_deleted_secret(ref).wait(DELETE_WAIT)
                    self.client.set_secret(ref, spec.envs[name], tags=tags)
            except http_error as exc:
                raise RuntimeError(f"azure key vault {self.url}: {ref} not set "
                                   f"({said(exc)})") from None
            refs[name] = ref
        return refs

    def _listed(self) -> list[Any]:
        """costsched's secrets in the vault (SecretProperties), those of `check` left out."""
        return [p for p in self.client.list_properties_of_secrets()
                if cloud_secrets.TAG_KEY in (p.tags or {})]

    def _delete(self, names: list[str]) -> list[str]:
        http_error, missing, _ = self._errors()
        for name in names:
            try:
                self.client.begin_delete_secret(name).wait(DELETE_WAIT)
            except missing:
                continue  # gone already
            try:  # else its value stays recoverable for the vault's retention days
                self.client.purge_deleted_secret(name)
            except missing:
                pass  # a vault without soft delete: gone already
            except http_error as exc:
                if not self._purge_refused:
                    log.warning("azure key vault %s: deleted secrets are not purged (%s): "
                                "the vault keeps them until its retention ends", self.url,
                                said(exc))
                self._purge_refused = True
        return names

    def delete_key(self, key: str) -> list[str]:
        """Delete the secrets of the attempt `key` (`cloud_secrets.key`); their names."""
        return self._delete(sorted(p.name for p in self._listed()
                                   if p.tags.get(cloud_secrets.TAG_KEY) == key))

    def delete(self, job_id: int, attempt: str) -> list[str]:
        """Delete the attempt's secrets (none left: nothing done); their names."""
        return self.delete_key(cloud_secrets.key(job_id, attempt))

    def sweep(self, live: Iterable[Instance], now: float | None = None) -> list[str]:
        """Delete the secrets of attempts with no live instance among `live`, older than
        SWEEP_AFTER_SECONDS; their names."""
        keys = cloud_secrets.live_keys(live)
        now = time.time() if now is None else now
        old = []
        for item in self._listed():
            made: datetime | None = item.created_on
            age = now - made.timestamp() if made is not None else float("inf")
            if item.tags[cloud_secrets.TAG_KEY] not in keys and \
                    age > cloud_secrets.SWEEP_AFTER_SECONDS:
                old.append(item.name)
        if old:
            log.info("deleted %d leftover secrets", len(old))
        return self._delete(sorted(old))

    def check_list(self) -> str:
        """`costsched check`: the vault answers (its first page of secrets), in one line."""
        first = next(iter(self.client.list_properties_of_secrets().by_page()), [])
        return f"answers ({len(list(first))} secrets on the first page)"

    def check_set(self) -> str:
        """`costsched check`: this identity may set a secret (the probe PROBE, no value of
        anyone's, set again each time), in one line."""
        self.client.set_secret(PROBE, "written by costsched check (not a secret)",
                               tags={"costsched": "check"})
        return f"allowed (secret {PROBE} set)"


# --- on the VM ----------------------------------------------------------------------------

def read_on_vm(vault: str, refs: Mapping[str, str]) -> dict[str, str]:
    """On the VM at boot: {environment name: value} of the secrets `refs` ({environment
    name: secret name}) of the vault at URL `vault`, read with the VM's managed identity (a
    token of the Instance Metadata Service, then Key Vault's Get Secret). No value is
    written, logged or put in an error: RuntimeError names the call and its status."""
    host = os.environ.get(ENV_IMDS, "").strip().rstrip("/") or IMDS
    query = urllib.parse.urlencode({"api-version": IMDS_API_VERSION,
                                    "resource": vault_resource(vault)})
    token = _get_json(f"{host}/metadata/identity/oauth2/token?{query}", {"Metadata": "true"},
                      "the VM's managed identity token for Key Vault", wait=TOKEN_WAIT,
                      again=(404, 410, 429))["access_token"]
    auth = {"Authorization": f"Bearer {token}"}
    found = {}
    for name, ref in refs.items():
        url = f"{vault.rstrip('/')}/secrets/{urllib.parse.quote(ref)}/?api-version={API_VERSION}"
        found[name] = str(_get_json(url, auth, f"secret {name} ({ref})", wait=TIMEOUT,
                                    again=(429,))["value"])
    return found


def _get_json(url: str, headers: Mapping[str, str], what: str, wait: float,
              again: tuple[int, ...]) -> Any:
    """One GET's JSON; retried for up to `wait` seconds while the answer says try again: a
    status of `again` (404 and 410 from a metadata service still starting, 429 throttled),
    5xx, or no answer."""
    deadline, pause = time.monotonic() + wait, 1.0
    while True:
        try:
            ask = urllib.request.Request(url, headers=dict(headers))
            with urllib.request.urlopen(ask, timeout=TIMEOUT) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            retry = exc.code in again or exc.code >= 500
            failure = f"HTTP {exc.code}{_error_code(exc)}"
        except urllib.error.URLError as exc:
            retry, failure = True, f"unreachable ({type(exc.reason).__name__})"
        if not retry or time.monotonic() + pause > deadline:
            raise RuntimeError(f"azure key vault: {what}: {failure}")
        time.sleep(pause)
        pause = min(pause * 2, 16.0)


def _error_code(exc: urllib.error.HTTPError) -> str:
    """' (CODE)' of a Key Vault or metadata error's JSON body (never the body itself)."""
    try:
        code = json.loads(exc.read() or b"{}").get("error", {})
        code = code.get("code", "") if isinstance(code, dict) else code
    except (ValueError, AttributeError, OSError):
        return ""
    return f" ({str(code)[:60]})" if code else ""
