"""What this machine can do on each cloud: SDK installed, credentials found, one harmless
authenticated call, and what that enables (collect prices, launch, checkpoints), with the
exact line that fixes each gap. No secret value is read into a result: credentials are
named by where they were found (an environment variable's name, a file's path, the
instance's role), never by their value.

The cloud SDKs are reached through costsched.clouds' SDK helpers, inside the probes; each
probe takes its SDK entry points as arguments so that tests give stubs (botocore's Stubber,
a fake Compute Engine client).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from costsched.redact import redact_url
from costsched.service.check_causes import (
    NETWORK_FIX,
    chain,
    first_line,
    network_cause,
    unreadable_file,
)
from costsched.service.check_result import (
    AWS_EXTRA,
    GCP_EXTRA,
    Call,
    CloudCheck,
    call_seconds,
    installed,
)

AWS_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
           "AWS_WEB_IDENTITY_TOKEN_FILE")
# botocore's name of where it found credentials -> how the user would say it
AWS_METHODS = {"env": "environment", "shared-credentials-file": "file ~/.aws/credentials",
               "config-file": "file ~/.aws/config", "iam-role": "instance role",
               "container-role": "container role", "assume-role": "assumed role (profile)",
               "assume-role-with-web-identity": "web identity (AWS_WEB_IDENTITY_TOKEN_FILE)",
               "sso": "AWS SSO (profile)", "explicit": "explicit"}
DEFAULT_AWS_REGION = "us-east-1"


TOTAL_SECONDS = 20.0  # the whole check, every cloud together


def check_all(*, aws: Callable[[], CloudCheck] | None = None,
              gcp: Callable[[], CloudCheck] | None = None,
              azure: Callable[[], CloudCheck] | None = None,
              total_seconds: float = TOTAL_SECONDS) -> list[CloudCheck]:
    """Every cloud's check, in a fixed order, run side by side: a cloud whose check has not
    ended within `total_seconds` (a call or a credential helper that never returns) is
    reported as such, and can do nothing; a check that fails is one line, never a
    traceback."""
    probes = [("aws", aws or (lambda: check_aws())), ("gcp", gcp or (lambda: check_gcp())),
              ("azure", azure or (lambda: check_azure()))]
    results: dict[str, CloudCheck] = {}

    def run(cloud: str, probe: Callable[[], CloudCheck]) -> None:
        try:
            results[cloud] = probe()
        except Exception as exc:  # noqa: BLE001 - one line per cloud, never a traceback
            results[cloud] = _failed(cloud, f"the check failed: {_describe(exc)}",
                                     "run `costsched check --json` again; if it persists, "
                                     "report this line")

    threads = [threading.Thread(target=run, args=probe, daemon=True, name=f"check-{probe[0]}")
               for probe in probes]
    import costsched.config  # noqa: F401 - loaded once here, not on any cloud's time
    deadline = time.monotonic() + total_seconds
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [results.get(cloud) or _failed(
        cloud, f"the check did not end within {total_seconds:g} s (a call or a credential "
        "helper that never returns)", NETWORK_FIX) for cloud, _probe in probes]


def _failed(cloud: str, cause: str, fix: str) -> CloudCheck:
    out = CloudCheck(cloud, extra_installed=True)
    out.problem = cause
    out.fixes.append(fix)
    return out


def _describe(exc: BaseException) -> str:
    """An unexpected error in one line: its type, and its first line redacted."""
    text = first_line(str(exc), 160)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def can_launch_somewhere(checks: list[CloudCheck]) -> bool:
    return any(c.launch for c in checks)


def _bad_files(files: dict[str, str]) -> tuple[str, str] | None:
    """(cause, fix) for the first credential file that cannot be read safely."""
    for name, path in files.items():
        why = unreadable_file(path)
        if why:
            where = f"{path} ({name})" if name.isupper() else path
            fix = (f"point {name} at the credentials file, or unset it" if name.isupper()
                   else f"move {path} away, then log in again")
            return f"{where} {why}", fix
    return None


def check_aws(client: Callable[[str, str], Any] | None = None,
              session: Any = None, seconds: float | None = None) -> CloudCheck:
    """boto3 installed; credentials (botocore's search: environment, files, credential
    helpers, instance role); STS GetCallerIdentity; EC2 DescribeInstances with DryRun
    (permission, no effect). Each call and credential helper is given `seconds` (config
    calls.timeout_seconds), one attempt. `client(service, region)` makes the clients
    (tests stub them)."""
    out = CloudCheck("aws", extra_installed=installed("boto3"))
    if not out.extra_installed:
        out.problem = "boto3 is not installed"
        out.fixes.append(AWS_EXTRA)
        return out
    from costsched.clouds import aws as aws_cloud

    seconds = call_seconds() if seconds is None else seconds
    out.credentials = [f"environment variable {n}" for n in AWS_ENV if os.environ.get(n)]
    keys = [n for n in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if os.environ.get(n)]
    if len(keys) == 1:
        other = ({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} - set(keys)).pop()
        return _gap(out, f"only {keys[0]} is set, not {other}",
                        f"export {other}=... (or unset {keys[0]} to use a profile)")
    bad = _bad_files(aws_cloud.credential_files())
    if bad:
        return _gap(out, *bad)
    try:
        if session is None:
            session = aws_cloud.new_session()
            aws_cloud.bound_credential_helper(session, seconds)
        found = session.get_credentials()
        region = session.region_name or DEFAULT_AWS_REGION
    except Exception as exc:  # noqa: BLE001 - each kind is named below, in one line
        return _gap(out, *_aws_credentials_error(exc, seconds))
    if found is None:
        files = [p for p in aws_cloud.credential_files().values() if Path(p).exists()]
        out.notes.append("no credentials found (looked in the environment, "
                         + ", ".join(["~/.aws/credentials", "~/.aws/config"])
                         + (" (present, no usable profile)" if files else "")
                         + " and the instance role)")
        out.problem = "no AWS credentials found"
        out.fixes.append("aws configure")
        return out
    method = AWS_METHODS.get(getattr(found, "method", ""), getattr(found, "method", "?"))
    if method != "environment":
        out.credentials.append(method)
    if client is None:
        def client(service: str, region_name: str) -> Any:
            return session.client(service, region_name=region_name,
                                  config=aws_cloud.bounded_config(seconds))

    ClientError, BotoCoreError = aws_cloud.sdk_errors()  # noqa: N806 - the SDK's classes
    try:
        who = client("sts", region).get_caller_identity()
        out.calls.append(Call("sts GetCallerIdentity", True,
                              f"account {who.get('Account', '?')} as {who.get('Arn', '?')}"))
    except ClientError as exc:
        out.calls.append(Call("sts GetCallerIdentity", False, _aws_error(exc)))
        out.problem = f"the credentials found ({method}) were refused: {_aws_error(exc)}"
        out.fixes.append("aws configure  # the credentials found were refused")
        return out
    except Exception as exc:  # noqa: BLE001 - network, credential helpers, endpoints
        cause, fix = _aws_call_error(exc, seconds)
        out.calls.append(Call("sts GetCallerIdentity", False, cause))
        return _gap(out, cause, fix)
    out.collect_prices = True  # spot price history needs any valid credentials
    out.checkpoints = True
    out.notes.append("S3 checkpoints: the credentials work; the bucket's own permissions "
                     "are checked when a job first writes to it")
    try:
        client("ec2", region).describe_instances(DryRun=True, MaxResults=5)
        dry_ok = True  # a real answer: DryRun was ignored, which still proves access
    except ClientError as exc:
        dry_ok = exc.response.get("Error", {}).get("Code") == "DryRunOperation"
        detail = _aws_error(exc)
    except Exception as exc:  # noqa: BLE001 - as above
        dry_ok, detail = False, _aws_call_error(exc, seconds)[0]
    else:
        detail = "allowed"
    out.calls.append(Call(f"ec2 DescribeInstances DryRun ({region})", dry_ok,
                          "allowed (dry run)" if dry_ok else detail))
    out.launch = dry_ok
    _aws_quotas(out, client, region, who.get("Arn", "your identity"), seconds)
    if not dry_ok:
        arn = who.get("Arn", "your identity")
        out.problem = f"ec2 DescribeInstances DryRun: {detail}"
        if network_cause_of(detail):
            out.fixes.append(NETWORK_FIX)
        else:
            out.fixes.append(f"# ask your AWS administrator to allow ec2:DescribeInstances, "
                             f"ec2:RunInstances and ec2:TerminateInstances for {arn}")
    return out


QUOTA_DENIED = ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation")


def _aws_quotas(out: CloudCheck, client: Callable[[str, str], Any], region: str, arn: str,
                seconds: float) -> None:
    """Whether Service Quotas lists the account's EC2 quotas (one bounded call): the
    permission missing, named in `out.quotas` and a note with its fix."""
    ClientError, _ = _aws_sdk_errors()  # noqa: N806 - the SDK's class
    name = f"service-quotas ListServiceQuotas ({region})"
    try:
        client("service-quotas", region).list_service_quotas(ServiceCode="ec2", MaxResults=1)
    except ClientError as exc:
        detail = _aws_error(exc)
        out.calls.append(Call(name, False, detail))
        if exc.response.get("Error", {}).get("Code") in QUOTA_DENIED:
            out.quotas = ("servicequotas:ListServiceQuotas is not allowed: plans cannot tell "
                          "which offerings the account's quotas hold")
            out.notes.append(f"quotas: {out.quotas}; fix: ask your AWS administrator to allow "
                             "servicequotas:ListServiceQuotas and servicequotas:"
                             f"ListAWSDefaultServiceQuotas for {arn}")
        else:
            out.quotas = f"quotas not read: {detail}"
        return
    except Exception as exc:  # noqa: BLE001 - network, endpoints: one line
        detail = _aws_call_error(exc, seconds)[0]
        out.calls.append(Call(name, False, detail))
        out.quotas = f"quotas not read: {detail}"
        return
    out.calls.append(Call(name, True, "allowed"))


def _aws_sdk_errors() -> tuple[type[Exception], type[Exception]]:
    from costsched.clouds import aws as aws_cloud

    return aws_cloud.sdk_errors()


def network_cause_of(detail: str) -> bool:
    return detail.startswith(_NETWORK_PREFIX)


_NETWORK_PREFIX = "network: "


def _gap(out: CloudCheck, cause: str, fix: str) -> CloudCheck:
    """`out` with nothing possible, its cause and the fix."""
    out.problem = cause
    out.fixes.append(fix)
    out.collect_prices = out.launch = out.checkpoints = False
    return out


def _aws_credentials_error(exc: BaseException, seconds: float) -> tuple[str, str]:
    """(cause, fix) of botocore failing to find or build credentials. botocore's messages
    are used only where they hold names and paths, never a helper's output."""
    from costsched.clouds import aws as aws_cloud

    name = type(exc).__name__
    kwargs = getattr(exc, "kwargs", {}) or {}
    profile = kwargs.get("profile") or os.environ.get("AWS_PROFILE") or "default"
    if isinstance(exc, aws_cloud.HelperTimeout) or any(
            isinstance(e, aws_cloud.HelperTimeout) for e in chain(exc)):
        return (f"the credential_process of profile {profile!r} did not return within "
                f"{seconds:g} s (it was stopped)",
                "run the profile's credential_process by hand to see why it waits (a login "
                "prompt?), or raise calls.timeout_seconds")
    if isinstance(exc, aws_cloud.HelperFailed) or any(
            isinstance(e, aws_cloud.HelperFailed) for e in chain(exc)):
        helper = next(e for e in chain(exc) if isinstance(e, aws_cloud.HelperFailed))
        return (f"the credential_process of profile {profile!r} failed ({helper}; its "
                "output is not shown: it may hold a secret)",
                "run the profile's credential_process by hand and fix what it says")
    if name == "ConfigParseError":
        return (f"{kwargs.get('path', 'an AWS config file')} cannot be parsed as an AWS "
                "config or credentials file", "fix the file's [profile] headers and "
                "its settings lines (or move it away and run `aws configure`)")
    if name == "ProfileNotFound":
        if os.environ.get("AWS_PROFILE") == kwargs.get("profile"):
            where = "AWS_PROFILE"
        else:
            where = "a source_profile in ~/.aws/config"
        return (f"{where} names the profile {kwargs.get('profile', '?')!r}, which does not "
                "exist", f"aws configure --profile {kwargs.get('profile', 'NAME')} (or name "
                "an existing profile: aws configure list-profiles)")
    if name == "PartialCredentialsError":
        return (f"partial credentials in {kwargs.get('provider', '?')}: "
                f"{kwargs.get('cred_var', '?')} is missing",
                f"add {kwargs.get('cred_var', 'the missing key')} (aws configure)")
    if name in ("InvalidConfigError", "InfiniteLoopConfigError"):
        return (f"the AWS profile chain is invalid: {first_line(str(exc), 160)}",
                "fix the profiles' source_profile / role_arn lines in ~/.aws/config")
    if name == "CredentialRetrievalError":
        return (f"the credential provider {kwargs.get('provider', '?')} failed (its message "
                "is not shown: it may hold a secret)",
                "run that provider's login or helper by hand and fix what it says")
    cause = network_cause(exc, seconds)
    if cause:
        return (f"{_NETWORK_PREFIX}{cause} (while getting credentials)", NETWORK_FIX)
    return (f"credentials could not be loaded ({name})", "aws configure")


def _aws_call_error(exc: BaseException, seconds: float) -> tuple[str, str]:
    """(cause, fix) of a call that got no answer, or failed before sending."""
    cause = network_cause(exc, seconds)
    if cause:
        endpoint = os.environ.get("AWS_ENDPOINT_URL")
        where = f" (AWS_ENDPOINT_URL {redact_url(endpoint)})" if endpoint else ""
        fix = NETWORK_FIX + (", or unset AWS_ENDPOINT_URL" if endpoint else "")
        return f"{_NETWORK_PREFIX}{cause}{where}", fix
    return _aws_credentials_error(exc, seconds)


def _aws_error(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        text = f"{error.get('Code', 'error')}: {error.get('Message', '')}".strip(": ")
        return first_line(text)
    return type(exc).__name__


def check_gcp(auth_default: Callable[[], tuple[Any, str | None]] | None = None,
              zones_client: Callable[[Any], Any] | None = None,
              seconds: float | None = None,
              regions_client: Callable[[Any], Any] | None = None) -> CloudCheck:
    """google-cloud-compute installed; Application Default Credentials (environment, the
    gcloud file, the instance's service account); a token (bounded); a Compute Engine
    zones list (bounded, no retries); a region's quotas (regions.get, bounded)."""
    out = CloudCheck("gcp", extra_installed=installed("google.cloud.compute_v1")
                     and installed("google.auth"))
    if not out.extra_installed:
        out.problem = "the google-cloud SDK is not installed"
        out.fixes.append(GCP_EXTRA)
        return out
    from costsched.clouds import gcp as gcp_cloud

    seconds = call_seconds() if seconds is None else seconds
    env_file = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    files = gcp_cloud.credential_files()
    adc = Path(files["gcloud application default credentials"])
    if env_file:
        out.credentials.append("environment variable GOOGLE_APPLICATION_CREDENTIALS"
                               + ("" if Path(env_file).exists() else " (its file is missing)"))
    if adc.exists():
        out.credentials.append(f"file {adc}")
    # The file google.auth will read: the variable's when set, else gcloud's.
    bad = _bad_files({"GOOGLE_APPLICATION_CREDENTIALS": files["GOOGLE_APPLICATION_CREDENTIALS"]}
                     if env_file else files)
    if bad:
        return _gap(out, *bad)
    auth_default = auth_default or gcp_cloud.default_credentials
    try:
        credentials, project = auth_default()
    except Exception as exc:  # noqa: BLE001 - google.auth raises several kinds; all mean none
        cause = network_cause(exc, seconds)
        if cause:
            return _gap(out, f"{_NETWORK_PREFIX}{cause}", NETWORK_FIX)
        text = first_line(str(exc), 160)
        out.notes.append(f"no credentials found ({type(exc).__name__}"
                         + (f": {text}" if text and env_file else "") + ")")
        out.problem = "no usable Google credentials"
        out.fixes.append("gcloud auth application-default login")
        return out
    if not env_file and not adc.exists():
        out.credentials.append("instance service account (metadata server)")
    project = os.environ.get("GOOGLE_CLOUD_PROJECT") or project
    if not project:
        out.notes.append("credentials found but no project")
        out.problem = "no project named"
        out.fixes.append("gcloud config set project PROJECT_ID")
        return out
    if hasattr(credentials, "refresh"):  # a token first: its failure says the most
        try:
            credentials.refresh(gcp_cloud.bounded_request(seconds))
        except Exception as exc:  # noqa: BLE001 - classified below
            cause = network_cause(exc, seconds)
            if cause:
                out.calls.append(Call("oauth2 token", False, f"{_NETWORK_PREFIX}{cause}"))
                return _gap(out, f"{_NETWORK_PREFIX}{cause} (while getting a token)",
                                NETWORK_FIX)
            out.calls.append(Call("oauth2 token", False, first_line(str(exc))))
            return _gap(out, "the credentials were refused: "
                            + first_line(str(exc), 120),
                            "gcloud auth application-default login")
    zones_client = zones_client or gcp_cloud.zones_client
    name = f"compute zones.list ({project})"
    try:
        zones = list(_list_zones(zones_client(credentials), project, seconds))
    except Exception as exc:  # noqa: BLE001 - google.api_core errors: classified below
        cause = network_cause(exc, seconds)
        if cause:
            out.calls.append(Call(name, False, f"{_NETWORK_PREFIX}{cause}"))
            return _gap(out, f"{_NETWORK_PREFIX}{cause}", NETWORK_FIX)
        text = str(exc)
        detail = first_line(text) if text else type(exc).__name__
        out.calls.append(Call(name, False, detail))
        out.problem = f"{name}: {detail}"
        if "SERVICE_DISABLED" in text or "has not been used" in text:
            out.fixes.append(f"gcloud services enable compute.googleapis.com --project {project}")
        elif _refused_for_permission(exc):
            out.fixes.append(f"gcloud projects add-iam-policy-binding {project} "
                             "--member=user:YOU@EXAMPLE.COM --role=roles/compute.instanceAdmin.v1")
        else:
            out.fixes.append("gcloud auth application-default login")
            return out  # not an answer that proves the credentials: nothing is possible
        out.collect_prices = True  # the billing catalog needs credentials, not Compute
        out.notes.append("prices: the Cloud Billing catalog needs the credentials only "
                         "(its API enabled: gcloud services enable cloudbilling.googleapis.com)")
        return out
    out.calls.append(Call(name, True, f"{len(zones)} zones"))
    out.collect_prices = out.launch = out.checkpoints = True
    _gcp_quotas(out, (regions_client or gcp_cloud.regions_client)(credentials), project,
                seconds)
    out.notes.append("GCS checkpoints: the credentials work; the bucket's own permissions "
                     "are checked when a job first writes to it")
    return out


GCP_QUOTA_REGION = "us-central1"  # the region whose quotas `check` reads


def _gcp_quotas(out: CloudCheck, client: Any, project: str, seconds: float) -> None:
    """Whether Compute Engine gives a region's quotas (one bounded regions.get): the
    permission missing, named in `out.quotas` and a note with its fix."""
    name = f"compute regions.get ({project}, {GCP_QUOTA_REGION})"
    try:
        try:
            client.get(project=project, region=GCP_QUOTA_REGION, timeout=seconds, retry=None)
        except TypeError:  # a client without them
            client.get(project=project, region=GCP_QUOTA_REGION)
    except Exception as exc:  # noqa: BLE001 - google.api_core errors: one line
        cause = network_cause(exc, seconds)
        detail = f"{_NETWORK_PREFIX}{cause}" if cause else first_line(str(exc)) or \
            type(exc).__name__
        out.calls.append(Call(name, False, detail))
        if _refused_for_permission(exc):
            out.quotas = ("compute.regions.get is not allowed: plans cannot tell which "
                          "offerings the project's quotas hold")
            out.notes.append(f"quotas: {out.quotas}; fix: gcloud projects add-iam-policy-"
                             f"binding {project} --member=user:YOU@EXAMPLE.COM "
                             "--role=roles/compute.viewer")
        else:
            out.quotas = f"quotas not read: {detail}"
        return
    out.calls.append(Call(name, True, "allowed"))


def _list_zones(client: Any, project: str, seconds: float) -> Any:
    """The zones list, bounded and not retried where the client takes those arguments."""
    try:
        return client.list(project=project, timeout=seconds, retry=None)
    except TypeError:  # a client without them
        return client.list(project=project)


def _refused_for_permission(exc: BaseException) -> bool:
    """Whether the API answered 403: the credentials work, a permission is missing."""
    code = getattr(exc, "code", None)
    text = str(exc)
    return code == 403 or text.startswith("403") or "PERMISSION_DENIED" in text \
        or "Forbidden" in type(exc).__name__


def check_azure(**probes: Any) -> CloudCheck:
    """Azure: its public prices, then what the account can do (costsched.service.check_azure;
    `probes`: that module's `check` arguments)."""
    from costsched.service.check_azure import check

    return check(**probes)
