"""A cloud's preemption notice, as its metadata server announces it to the instance."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from urllib.parse import urlsplit, urlunsplit

# The metadata server's address where it is not the usual one (tests, emulators): the
# variables the clouds' own SDKs read.
_METADATA_ENVS = {"169.254.169.254": "AWS_EC2_METADATA_SERVICE_ENDPOINT",
                  "metadata.google.internal": "GCE_METADATA_HOST"}
_AZURE_METADATA_ENV = "AZURE_POD_IDENTITY_AUTHORITY_HOST"
_AZURE_EVENTS = "/metadata/scheduledevents"
_NOTICE_TIMEOUT = 2.0


def notice_present(url: str) -> bool:
    """Whether a cloud's metadata server announces a preemption: AWS spot/instance-action
    answers 200 with JSON when there is a notice and 404 otherwise; GCP instance/preempted
    answers TRUE or FALSE; Azure's Scheduled Events list a Preempt event
    (launchers.azure_events). Unreachable counts as no notice."""
    if urlsplit(url).path.startswith(_AZURE_EVENTS):
        from launchers.azure_events import preempt_announced

        return preempt_announced(url)
    headers = {"Metadata-Flavor": "Google"}
    for _ in range(2):
        try:
            request = urllib.request.Request(url, headers=headers)
            with urllib.request.urlopen(request, timeout=_NOTICE_TIMEOUT) as response:
                body = response.read().decode(errors="replace").strip()
            return bool(body) and body.upper() != "FALSE"
        except urllib.error.HTTPError as exc:
            if exc.code == 401 and "X-aws-ec2-metadata-token" not in headers:
                token = _imds_token(url)  # IMDSv2; never logged
                if token:
                    headers["X-aws-ec2-metadata-token"] = token
                    continue
            return False
        except (OSError, ValueError):
            return False
    return False


def metadata_url(url: str) -> str:
    """`url` on the metadata endpoint the environment names, for a cloud's usual address
    (AWS_EC2_METADATA_SERVICE_ENDPOINT: a URL; GCE_METADATA_HOST: host[:port]; Azure's,
    AZURE_POD_IDENTITY_AUTHORITY_HOST: a URL)."""
    parts = urlsplit(url)
    name = _METADATA_ENVS.get(parts.hostname or "", "")
    if parts.path.startswith("/metadata/"):  # Azure's (at AWS's address): azure-identity's
        name = _AZURE_METADATA_ENV
    override = os.environ.get(name, "").strip()
    if not override:
        return url
    base = urlsplit(override if "://" in override else f"http://{override}")
    return urlunsplit((base.scheme, base.netloc, parts.path, parts.query, ""))


def _imds_token(url: str) -> str:
    parts = urlsplit(url)
    token_url = urlunsplit((parts.scheme, parts.netloc, "/latest/api/token", "", ""))
    request = urllib.request.Request(token_url, method="PUT",
                                     headers={"X-aws-ec2-metadata-token-ttl-seconds": "300"})
    try:
        with urllib.request.urlopen(request, timeout=_NOTICE_TIMEOUT) as response:
            return response.read().decode().strip()
    except (OSError, ValueError):
        return ""


def redact(uri: str) -> str:
    """A URI without the user:password@ part, for logs."""
    parts = urlsplit(uri)
    if "@" not in parts.netloc:
        return uri
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
