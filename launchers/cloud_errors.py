"""The one place a cloud SDK's exception is told apart: beside the capacity and quota
errors each launcher reads from its cloud's answer, every other failure of a call to a cloud
becomes the port's `CloudError` (one line: the cloud, the call, the cause and the fix), of a
kind the migration machine acts on: transient (the network, a timeout, throttling, a 5xx),
denied (a permission, credentials refused or expired) or refused (any other answer, an SDK's
unexpected failure). `translated` applies it to a launcher's port methods, so that whoever
calls them (a launch, a recovery pass, `status`) meets one line, never an SDK's traceback.

An exception that is not a cloud's (a bug of costsched's own) is left as it is.
"""

from __future__ import annotations

import functools
import socket
from collections.abc import Callable
from typing import Any, TypeVar

from costsched.clouds import aws as aws_facts
from costsched.clouds import azure as azure_facts
from costsched.migration.launcher import CapacityError, CarryError, CloudError, LaunchSpec
from costsched.model import InvalidInput

L = TypeVar("L")

# The port's methods whose failures are translated, as a line names them.
PORT_CALLS = {"launch": "launch", "status": "status",
              "statuses": "status of the jobs' instances",
              "instances": "list of the job's instances", "terminate": "terminate",
              "request_stop": "stop request", "repair_nodes": "node repair",
              "recover_agent": "agent recovery", "purchase": "purchase",
              "purchased": "purchase lookup", "nodes": "nodes", "logs": "logs"}
# Where a cloud's API answers from: a region's endpoint (EC2), or one for the whole cloud
# (Compute Engine's, Resource Manager's). Its rate limits are counted there too.
ENDPOINT_SCOPE = {"aws": "region", "gcp": "cloud", "azure": "cloud"}
NETWORK_FIX = "check this machine's network (a proxy, DNS, a firewall) to the cloud's API"
CHECK = "`costsched check` says what each cloud can do from here"
FIXES = {
    ("aws", "permission"): "allow it to the AWS identity costsched uses (its IAM policy); "
                           + CHECK,
    ("aws", "credentials"): "renew the AWS credentials (`aws sso login`, `aws configure`, "
                            "or new keys in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY); " + CHECK,
    ("gcp", "permission"): "grant the permission it names to the account costsched uses "
                           "(`gcloud projects add-iam-policy-binding`); " + CHECK,
    ("gcp", "credentials"): "log in again: `gcloud auth application-default login`; " + CHECK,
    ("azure", "permission"): "assign the identity costsched uses a role that allows it "
                             "(Virtual Machine Contributor on the resource group); " + CHECK,
    ("azure", "credentials"): "log in again: `az login`; " + CHECK,
}
_LIMIT = 300  # characters of an SDK's message kept


def translated(cloud: str) -> Callable[[type[L]], type[L]]:
    """Class decorator: the launcher's port methods raise `CloudError` for a failure of a
    call to `cloud` (what `cloud_error` tells from the SDK's exception); bad input,
    capacity, quota, carry and costsched's own errors pass as they are."""
    def wrap(cls: type[L]) -> type[L]:
        for name in PORT_CALLS:
            method = cls.__dict__.get(name)
            if method is not None:
                setattr(cls, name, _translating(cloud, name, method))
        return cls
    return wrap


def _translating(cloud: str, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (InvalidInput, CapacityError, CarryError, CloudError):
            raise
        except Exception as exc:
            found = cloud_error(cloud, _call_of(PORT_CALLS[name], args), exc)
            if found is None:
                raise
            raise found from exc
    return call


def _call_of(name: str, args: tuple) -> str:
    """The port call in words, with where it was made when its first argument says it."""
    first = args[0] if args else None
    if isinstance(first, LaunchSpec):
        offering = first.offering
        return f"{offering.zone or offering.region}: {name} {offering.instance_type}"
    if isinstance(first, str) and "/" in first:
        return f"{first.split('/', 1)[0]}: {name}"
    return name


def translate(cloud: str, call: str, exc: BaseException) -> BaseException:
    """`exc` as the CloudError it is (`cloud_error`), else itself: for a launcher's own
    `raise translate(...) from exc` where it knows the call better than its port method."""
    return cloud_error(cloud, call, exc) or exc


def cloud_error(cloud: str, call: str, exc: BaseException) -> CloudError | None:
    """`exc`, raised by a call to `cloud` (`call`: where and what, e.g. "us-east-1:
    launch p3.2xlarge"), as a CloudError; None when it is not a cloud's or the network's."""
    for tell in (*_TELLERS.get(cloud, ()), _network):
        found = tell(cloud, call, exc)
        if found is not None:
            return found
    return None


def _message(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:_LIMIT] + ("..." if len(text) > _LIMIT else "")


def _named(exc: BaseException, text: str = "") -> str:
    """'TypeName: message' of an exception (the message given or its own)."""
    said = text or _message(exc)
    return type(exc).__name__ + (f": {said}" if said else "")


def _error(cloud: str, call: str, kind: str, what: str, *, scope: str = "offering",
           sent: bool = False, fix: str = "") -> CloudError:
    return CloudError(cloud, call, what, kind=kind, scope=scope, sent=sent, fix=fix)


def _unreachable(cloud: str, call: str, exc: BaseException, sent: bool) -> CloudError:
    """The cloud's API could not be reached, or its answer was lost."""
    what = ("no answer in time or the connection dropped, the request may have been "
            "carried out" if sent else "cannot reach the cloud's API")
    return _error(cloud, call, "transient", f"{what} ({_named(exc)})",
                  scope="offering" if sent else ENDPOINT_SCOPE.get(cloud, "cloud"),
                  sent=sent, fix=NETWORK_FIX)


def _throttled(cloud: str, call: str, what: str) -> CloudError:
    return _error(cloud, call, "transient", f"throttled by the cloud's API ({what})",
                  scope=ENDPOINT_SCOPE.get(cloud, "cloud"))


def _server(cloud: str, call: str, what: str) -> CloudError:
    return _error(cloud, call, "transient", f"the cloud's API failed ({what}), the request "
                  "may have been carried out", sent=True)


def _denied(cloud: str, call: str, what: str, credentials: bool) -> CloudError:
    reason = "credentials refused or expired" if credentials else "not allowed"
    return _error(cloud, call, "denied", f"{reason} ({what})", scope="cloud",
                  fix=FIXES[(cloud, "credentials" if credentials else "permission")])


def _refused(cloud: str, call: str, what: str) -> CloudError:
    return _error(cloud, call, "refused", what)


# --- each SDK ------------------------------------------------------------------------------

def _aws(cloud: str, call: str, exc: BaseException) -> CloudError | None:
    try:
        from botocore import exceptions as bx
    except ImportError:
        return None
    if isinstance(exc, bx.ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        operation = getattr(exc, "operation_name", "") or ""
        what = f"{code}: {' '.join(str(error.get('Message', '')).split())[:_LIMIT]}"
        if operation and operation.lower() not in call.replace("_", "").lower():
            call = f"{call} ({operation})"  # the API's name for it, where the call hides it
        if code in aws_facts.THROTTLING_ERROR_CODES or status == 429:
            return _throttled(cloud, call, what)
        if code in aws_facts.CREDENTIAL_ERROR_CODES or status == 401:
            return _denied(cloud, call, what, credentials=True)
        if code in aws_facts.PERMISSION_ERROR_CODES or status == 403:
            return _denied(cloud, call, what, credentials=False)
        if code in aws_facts.SERVER_ERROR_CODES or status >= 500:
            return _server(cloud, call, what)
        return _refused(cloud, call, what)
    if isinstance(exc, (bx.ReadTimeoutError, bx.ConnectionClosedError,
                        bx.ResponseStreamingError, bx.IncompleteReadError)):
        return _unreachable(cloud, call, exc, sent=True)
    if isinstance(exc, bx.ConnectionError):  # connect: refused, timed out, proxy, TLS
        return _unreachable(cloud, call, exc, sent=False)
    if isinstance(exc, (bx.NoCredentialsError, bx.PartialCredentialsError,
                        bx.CredentialRetrievalError, bx.TokenRetrievalError, bx.SSOError)):
        return _denied(cloud, call, _named(exc), credentials=True)
    if isinstance(exc, bx.BotoCoreError):
        return _refused(cloud, call, _named(exc))
    return None


def _gcp(cloud: str, call: str, exc: BaseException) -> CloudError | None:
    try:
        from google.api_core import exceptions as gx
        from google.auth import exceptions as auth
    except ImportError:
        return None
    if isinstance(exc, (gx.Unauthorized, auth.RefreshError, auth.DefaultCredentialsError)):
        return _denied(cloud, call, _named(exc), credentials=True)
    if isinstance(exc, gx.Forbidden):
        return _denied(cloud, call, _named(exc), credentials=False)
    if isinstance(exc, gx.TooManyRequests):
        return _throttled(cloud, call, _named(exc))
    if isinstance(exc, (gx.ServerError, gx.RetryError)):
        return _server(cloud, call, _named(exc))
    if isinstance(exc, auth.TransportError):  # the token could not be fetched
        return _unreachable(cloud, call, exc, sent=False)
    if isinstance(exc, gx.GoogleAPIError):
        return _refused(cloud, call, _named(exc))
    return _requests(cloud, call, exc)


def _requests(cloud: str, call: str, exc: BaseException) -> CloudError | None:
    """The errors of the HTTP library under the Google clients."""
    try:
        from requests import exceptions as rx
    except ImportError:
        return None
    if isinstance(exc, rx.ConnectTimeout):
        return _unreachable(cloud, call, exc, sent=False)
    if isinstance(exc, (rx.Timeout, rx.ChunkedEncodingError)):
        return _unreachable(cloud, call, exc, sent=True)
    if isinstance(exc, rx.ConnectionError):
        # Refused or not resolved: never sent; dropped once connected: perhaps carried out.
        dropped = "aborted" in str(exc).lower() or "reset" in str(exc).lower()
        return _unreachable(cloud, call, exc, sent=dropped)
    if isinstance(exc, rx.RequestException):
        return _refused(cloud, call, _named(exc))
    return None


def _azure(cloud: str, call: str, exc: BaseException) -> CloudError | None:
    try:
        from azure.core import exceptions as ax
    except ImportError:
        return None
    if isinstance(exc, ax.ServiceRequestError):  # the request was not sent
        return _unreachable(cloud, call, exc, sent=False)
    if isinstance(exc, ax.ServiceResponseError):  # sent; its answer was lost
        return _unreachable(cloud, call, exc, sent=True)
    if isinstance(exc, ax.HttpResponseError):
        error = getattr(exc, "error", None)
        code = str(getattr(error, "code", "") or "")
        message = getattr(error, "message", None) or getattr(exc, "message", None) or ""
        what = (f"{code}: " if code else "") + " ".join(str(message).split())[:_LIMIT]
        what = what or _named(exc)
        status = int(getattr(exc, "status_code", 0) or 0)
        if status == 429:
            return _throttled(cloud, call, what)
        permission = code in azure_facts.PERMISSION_ERROR_CODES or status == 403
        if permission:
            return _denied(cloud, call, what, credentials=False)
        if code in azure_facts.CREDENTIAL_ERROR_CODES or status == 401 or \
                isinstance(exc, ax.ClientAuthenticationError):  # no token (az login)
            return _denied(cloud, call, what, credentials=True)
        if status >= 500:
            return _server(cloud, call, what)
        return _refused(cloud, call, what)
    if isinstance(exc, ax.AzureError):
        return _refused(cloud, call, _named(exc))
    return None


def _network(cloud: str, call: str, exc: BaseException) -> CloudError | None:
    """The standard library's: a connection refused or not resolved (never sent), a
    timeout or a connection dropped (perhaps carried out)."""
    if isinstance(exc, (ConnectionRefusedError, socket.gaierror)):
        return _unreachable(cloud, call, exc, sent=False)
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return _unreachable(cloud, call, exc, sent=True)
    return None


_TELLERS: dict[str, tuple[Callable[[str, str, BaseException], CloudError | None], ...]] = {
    "aws": (_aws,), "gcp": (_gcp,), "azure": (_azure,)}
