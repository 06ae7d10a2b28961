"""GCP: region and zone names, accelerator type names, egress, the default preemption rate,
and the project and credentials the SDK clients use (imported only when called)."""

from __future__ import annotations

import os
import re
from typing import Any

from costsched.clouds.base import (
    Cloud,
    EgressPrice,
    NotSetUp,
    PreemptionRate,
    SdkMissing,
    message_field,
)


class NoCredentials(NotSetUp):
    """No Application Default Credentials; str() says how to provide them."""


class QueryFailed(RuntimeError):
    """A BigQuery query the service refused or could not run; str() is its message."""


class NoProject(NotSetUp):
    """No project named, in the environment or in the credentials; str() says where."""


# The regions Compute Engine lists (2026-05, cloud.google.com/compute/docs/regions-zones).
# A region opened since is accepted by its shape (base.py).
REGIONS = frozenset({
    "africa-south1", "asia-east1", "asia-east2", "asia-northeast1", "asia-northeast2",
    "asia-northeast3", "asia-south1", "asia-south2", "asia-southeast1", "asia-southeast2",
    "australia-southeast1", "australia-southeast2", "europe-central2", "europe-north1",
    "europe-north2", "europe-southwest1", "europe-west1", "europe-west2", "europe-west3",
    "europe-west4", "europe-west6", "europe-west8", "europe-west9", "europe-west10",
    "europe-west12", "me-central1", "me-central2", "me-west1", "northamerica-northeast1",
    "northamerica-northeast2", "northamerica-south1", "southamerica-east1",
    "southamerica-west1", "us-central1", "us-east1", "us-east4", "us-east5", "us-south1",
    "us-west1", "us-west2", "us-west3", "us-west4",
})
# The zones of the regions the bundled catalog prices (2026-05, as the regions above).
ZONES = frozenset(f"{region}-{letter}" for region, letters in {
    "asia-east1": "abc", "asia-northeast1": "abc", "asia-southeast1": "abc",
    "europe-west1": "bcd", "europe-west4": "abc", "us-central1": "abcf", "us-east1": "bcd",
    "us-east4": "abc", "us-east5": "abc", "us-south1": "abc", "us-west1": "abc",
    "us-west4": "abc",
}.items() for letter in letters)
# The shape GCP names regions with: a geography, a direction and a number (us-central1,
# europe-west4, northamerica-northeast2).
_REGION = (r"(?:us|europe|asia|australia|northamerica|southamerica|me|africa)-"
           r"(?:north|south|east|west|central)(?:east|west|central)?[1-9]\d?")

GCP = Cloud(
    name="gcp",
    region_pattern=re.compile(_REGION),
    region_example="us-central1",
    # The region, "-" and a letter.
    zone_pattern=re.compile(rf"^(?P<region>{_REGION})-[a-z]$"),
    zone_example="us-central1-a",
    regions=REGIONS,
    zones=ZONES,
    egress=EgressPrice(
        0.12, 0.02,
        "cloud.google.com/vpc/network-pricing: premium tier internet egress $0.12/GB "
        "(0-1 TiB/month), between regions within North America $0.02/GB; not re-checked "
        "here (no GCP prices in the recorded traces); Cloud Storage to Compute Engine in "
        "the bucket's region free",
    ),
    storage_schemes=("gs://",),
    preemption=PreemptionRate(
        0.633, "measured: dispa2020 gcp/availability, us-central1/us-east1/us-west1, "
        "2020-03-01..07: 445 preemptions in 703.2 instance-hours"),
    # Accelerator type names of the Compute Engine API.
    accelerators={"K80": "nvidia-tesla-k80", "P4": "nvidia-tesla-p4",
                  "P100": "nvidia-tesla-p100",
                  "V100": "nvidia-tesla-v100", "T4": "nvidia-tesla-t4",
                  "A100": "nvidia-tesla-a100", "A100-80GB": "nvidia-a100-80gb",
                  "L4": "nvidia-l4", "H100": "nvidia-h100-80gb",
                  "H100-MEGA": "nvidia-h100-mega-80gb", "H200": "nvidia-h200-141gb",
                  "B200": "nvidia-b200"},
)

# GPU names as Cloud Billing Catalog SKU descriptions spell them (lower case).
SKU_GPU_NAMES = {"nvidia tesla k80": "K80", "nvidia tesla p4": "P4",
                 "nvidia tesla p100": "P100",
                 "nvidia tesla v100": "V100", "nvidia tesla t4": "T4",
                 "nvidia tesla a100": "A100", "nvidia tesla a100 80gb": "A100-80GB",
                 "nvidia a100 80gb": "A100-80GB", "nvidia l4": "L4",
                 "nvidia h100 80gb": "H100", "nvidia h100": "H100",
                 "nvidia h100 80gb mega": "H100-MEGA", "nvidia h200 141gb": "H200",
                 "nvidia h200": "H200", "nvidia b200": "B200"}


SDK_MISSING = "gcp: the google-cloud SDK is not installed: pip install 'costsched[gcp]'"
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
TOKEN_SECONDS = 10.0  # how long a launch waits for a token before it says why it cannot
# How long a flex-start request waits for capacity before it fails (the launcher sets it as
# requestValidForDuration; the planner keeps the time to finish on-demand if it waits longer).
FLEX_START_WAIT_HOURS = 2.0


def credentials_and_project(project: str | None = None) -> tuple[object, str]:
    """Application Default Credentials and the project to use: `project`, else
    GOOGLE_CLOUD_PROJECT, CLOUDSDK_CORE_PROJECT, else the credentials' own. SdkMissing
    without the SDK; NoCredentials or NoProject (LookupErrors, one line: what to do)."""
    try:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError
    except ImportError:
        raise SdkMissing(SDK_MISSING) from None
    try:
        credentials, default_project = google.auth.default()
    except DefaultCredentialsError:
        raise NoCredentials("gcp: no Google credentials found: run `gcloud auth "
                            "application-default login` or set GOOGLE_APPLICATION_CREDENTIALS"
                            ) from None
    chosen = (project or os.environ.get("GOOGLE_CLOUD_PROJECT")
              or os.environ.get("CLOUDSDK_CORE_PROJECT") or default_project)
    if not chosen:
        raise NoProject("gcp: no project: name one, or set GOOGLE_CLOUD_PROJECT")
    return credentials, chosen


def default_credentials() -> tuple[Any, str | None]:
    """google.auth's Application Default Credentials and their project, as it finds them
    (its own errors when there are none)."""
    import google.auth

    return google.auth.default(scopes=[CLOUD_PLATFORM])


def check_token(credentials: Any, seconds: float = TOKEN_SECONDS) -> None:
    """A token for `credentials` (kept by them for the calls that follow), asked for in
    `seconds` at most when they hold none. NotSetUp (one line: why, what to do) when
    Google refuses them (a login expired or revoked) or cannot be reached."""
    from google.auth import credentials as auth_credentials
    from google.auth import exceptions

    # Scoped as the SDK clients scope them (a service account's key has no scope of its own).
    scoped = auth_credentials.with_scopes_if_required(credentials, [CLOUD_PLATFORM])
    if getattr(scoped, "valid", False) or not hasattr(scoped, "refresh"):
        return
    try:
        scoped.refresh(bounded_request(seconds))
    except exceptions.TransportError as exc:
        raise NotSetUp(f"gcp: Google's token service was not reached ({_said(exc)}): "
                       "check this machine's network, then launch again") from None
    except exceptions.GoogleAuthError as exc:
        raise NoCredentials(f"gcp: the Google credentials were refused ({_said(exc)}): run "
                            "`gcloud auth application-default login` or set "
                            "GOOGLE_APPLICATION_CREDENTIALS") from None


def _said(exc: Exception) -> str:
    """An auth error's own words on one line (its first argument: google-auth adds the
    token endpoint's whole answer as the second)."""
    first = exc.args[0] if exc.args else ""
    return " ".join(str(first or type(exc).__name__).split())[:160]


def instances_client(credentials: Any) -> Any:
    """A Compute Engine instances client with `credentials`; SdkMissing without
    google-cloud-compute (google-auth alone comes with the storage library)."""
    try:
        from google.cloud import compute_v1
    except ImportError:
        raise SdkMissing(SDK_MISSING) from None
    return compute_v1.InstancesClient(credentials=credentials)


def zones_client(credentials: Any) -> Any:
    """A Compute Engine zones client with `credentials`."""
    from google.cloud import compute_v1

    return compute_v1.ZonesClient(credentials=credentials)


def regions_client(credentials: Any) -> Any:
    """A Compute Engine regions client with `credentials` (a region's quotas)."""
    from google.cloud import compute_v1

    return compute_v1.RegionsClient(credentials=credentials)


def reservations_client(credentials: Any) -> Any:
    """A Compute Engine reservations client with `credentials` (the reservations held)."""
    from google.cloud import compute_v1

    return compute_v1.ReservationsClient(credentials=credentials)


# The boot image launchers use when none is given: a Deep Learning VM image family with CUDA
# (its metadata key `install-nvidia-driver` installs the driver at first boot).
GPU_IMAGE = "projects/deeplearning-platform-release/global/images/family/common-cu121"
# Inside an instance: "TRUE" once the instance is being preempted (header Metadata-Flavor:
# Google; `?wait_for_change=true` blocks until it changes).
PREEMPTION_NOTICE_URL = "http://metadata.google.internal/computeMetadata/v1/instance/preempted"
# Machine families whose machine types come with their GPUs attached (no guest accelerators).
ACCELERATOR_MACHINE_FAMILIES = ("a2", "a3", "a4", "g2", "g4")
# Error codes (and, lower case, words of messages) of an insert that mean "not this offering
# now": try the next one.
CAPACITY_ERROR_CODES = frozenset({
    "ZONE_RESOURCE_POOL_EXHAUSTED", "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS",
    "QUOTA_EXCEEDED", "quotaExceeded",
})
CAPACITY_ERROR_WORDS = ("stockout", "does not have enough resources", "resource_pool_exhausted",
                        "quota")

# Of those, the codes that mean a quota of the project is used up: the message names it
# ("Quota 'NVIDIA_V100_GPUS' exceeded.  Limit: 0.0 in region us-central1.").
QUOTA_ERROR_CODES = frozenset({"QUOTA_EXCEEDED", "quotaExceeded"})
QUOTA_IN_MESSAGE = re.compile(r"Quota '(?P<metric>[A-Z0-9_]+)' exceeded", re.I)

# Environment variables that carry this cloud's credentials: never stored nor sent to an
# instance (instances use their own role).
CREDENTIAL_ENVS = ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_OAUTH_ACCESS_TOKEN")


# --- quotas ---------------------------------------------------------------------------------

# Compute Engine's allocation quotas a GPU instance draws on (the metrics `regions.get` and
# `projects.get` list with their limit and usage): its GPU model's regional quota
# (NVIDIA_V100_GPUS; a Spot VM draws on PREEMPTIBLE_NVIDIA_V100_GPUS where the project has
# that quota, else on the standard one), the project's GPUS_ALL_REGIONS, and for an N1
# machine the region's CPUS (PREEMPTIBLE_CPUS likewise for Spot VMs).
ALL_REGIONS_GPUS = "GPUS_ALL_REGIONS"
QUOTA_SERVICE = "compute.googleapis.com"
# The metrics a reading keeps: GPUs, and the CPU quotas of the machine families.
QUOTA_METRIC = re.compile(r"^(?!COMMITTED_)(PREEMPTIBLE_)?(NVIDIA_[A-Z0-9_]+_GPUS"
                          r"|([A-Z0-9]+_)?CPUS)$|^GPUS_ALL_REGIONS$")


def zones_listed(pages: Any, kind: str) -> dict[str, dict[str, int]]:
    """name -> {zone: most cards per instance (0 for a machine type)} from a Compute Engine
    aggregated list of `kind` ("accelerator_types" or "machine_types"): its pages as the
    client yields them ((scope, scoped list) pairs) or as a REST body's `items` (a dict of
    scope -> scoped list). The price collector and the launcher read zones through it."""
    camel = {"accelerator_types": "acceleratorTypes", "machine_types": "machineTypes"}[kind]
    zones: dict[str, dict[str, int]] = {}
    for scope, scoped in pages.items() if isinstance(pages, dict) else pages:
        for item in message_field(scoped, kind, camel, default=[]) or []:
            zone = str(message_field(item, "zone", default="") or scope).rstrip("/")
            cards = int(message_field(item, "maximum_cards_per_instance",
                                      "maximumCardsPerInstance", default=0) or 0)
            of_name = zones.setdefault(str(message_field(item, "name", default="")), {})
            of_name[zone.split("/")[-1]] = max(cards, of_name.get(zone.split("/")[-1], 0))
    return zones


def gpu_quota_metric(gpu_model: str) -> str:
    """The regional quota of a catalog GPU model: V100 -> NVIDIA_V100_GPUS, A100-80GB ->
    NVIDIA_A100_80GB_GPUS, H100-MEGA -> NVIDIA_H100_MEGA_GPUS."""
    return "NVIDIA_" + gpu_model.upper().replace("-", "_") + "_GPUS"


def quota_needs(region: str, instance_type: str, market: str, gpu_model: str,
                gpu_count: int, vcpus: int) -> tuple:
    """The GPU quotas of the region and the project, and an N1 machine's CPUs."""
    from costsched.clouds.quota_need import GLOBAL, Need

    spot = market == "spot"
    out = []
    if gpu_model and gpu_count > 0:
        metric = gpu_quota_metric(gpu_model)
        codes = (f"PREEMPTIBLE_{metric}", metric) if spot else (metric,)
        out.append(Need("gcp", region, codes, "GPUs", float(gpu_count), codes[0]))
        out.append(Need("gcp", GLOBAL, (ALL_REGIONS_GPUS,), "GPUs", float(gpu_count),
                        ALL_REGIONS_GPUS))
    if instance_type.startswith("n1-") and vcpus > 0:
        codes = ("PREEMPTIBLE_CPUS", "CPUS") if spot else ("CPUS",)
        out.append(Need("gcp", region, codes, "vCPUs", float(vcpus), codes[0]))
    return tuple(out)


def quota_id(metric: str, scope: str) -> str:
    """The Cloud Quotas id of a Compute Engine metric: NVIDIA_V100_GPUS in a region ->
    NVIDIA-V100-GPUS-per-project-region; GPUS_ALL_REGIONS -> GPUS-ALL-REGIONS-per-project."""
    from costsched.clouds.quota_need import GLOBAL

    return metric.replace("_", "-") + ("-per-project" if scope == GLOBAL
                                       else "-per-project-region")


def quota_request(code: str, scope: str, value: float, account: str = "") -> str:
    """The gcloud line that asks for `value` of quota `code` (in region `scope`)."""
    from costsched.clouds.quota_need import GLOBAL

    project = account or "PROJECT_ID"
    if scope == GLOBAL:
        return (f"gcloud beta quotas preferences create --service={QUOTA_SERVICE} "
                f"--quota-id={quota_id(code, scope)} --preferred-value={value:g} "
                f"--project={project}")
    return (f"gcloud beta quotas preferences create --service={QUOTA_SERVICE} "
            f"--quota-id={quota_id(code, scope)} --dimensions=region={scope} "
            f"--preferred-value={value:g} --project={project}")


# --- bounded calls (`costsched check`) ------------------------------------------------------


def credential_files(env: Any = None) -> dict[str, str]:
    """The files Application Default Credentials are read from: {variable or default name:
    path} (a path may not exist)."""
    env = os.environ if env is None else env
    config = os.path.expanduser(env.get("CLOUDSDK_CONFIG") or "~/.config/gcloud")
    files = {"gcloud application default credentials":
             os.path.join(config, "application_default_credentials.json")}
    if env.get("GOOGLE_APPLICATION_CREDENTIALS"):
        files["GOOGLE_APPLICATION_CREDENTIALS"] = os.path.expanduser(
            env["GOOGLE_APPLICATION_CREDENTIALS"])
    return files


def bounded_request(seconds: float) -> Any:  # -> google.auth.transport.Request
    """A google-auth transport whose every request (a token refresh) is given `seconds`."""
    import google.auth.transport.requests as transport

    inner = transport.Request()

    def request(url: str, method: str = "GET", body: Any = None, headers: Any = None,
                timeout: float | None = None, **kwargs: Any) -> Any:
        return inner(url, method=method, body=body, headers=headers, timeout=seconds,
                     **kwargs)

    return request


def bigquery_rows(project: str, sql: str, timestamps: dict[str, Any],
                  client: Any = None) -> list[dict]:
    """The rows of a BigQuery query with TIMESTAMP parameters `timestamps` (name: aware
    datetime), as dicts. `client`: a google.cloud.bigquery.Client (default: one on
    `project` with the default credentials). SdkMissing without google-cloud-bigquery,
    NoCredentials without credentials, QueryFailed when the query fails."""
    try:
        from google.api_core import exceptions
        from google.auth.exceptions import GoogleAuthError
        from google.cloud import bigquery
    except ImportError:
        raise SdkMissing("gcp: google-cloud-bigquery is not installed: "
                         "pip install 'costsched[gcp]'") from None
    try:
        bq = client if client is not None else bigquery.Client(project=project)
    except GoogleAuthError as exc:
        raise NoCredentials(type(exc).__name__) from None
    config = bigquery.QueryJobConfig(query_parameters=[
        bigquery.ScalarQueryParameter(name, "TIMESTAMP", at)
        for name, at in timestamps.items()])
    try:
        return [dict(r.items()) for r in bq.query_and_wait(sql, job_config=config)]
    except (exceptions.GoogleAPICallError, GoogleAuthError) as exc:
        message = getattr(exc, "message", "") or str(exc)
        raise QueryFailed(str(message).splitlines()[0][:200]) from None
