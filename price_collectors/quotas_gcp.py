"""GCP's Compute Engine quotas GPU instances draw on: each region's GPU and CPU quotas with
their usage (`regions.list`: every region's quotas in one call), and the project's
GPUS_ALL_REGIONS (`projects.get`).

Permissions: compute.regions.list and compute.projects.get (roles/compute.viewer has
both). A missing one is named in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from costsched.clouds import SdkMissing
from costsched.clouds import gcp as gcp_cloud
from costsched.clouds.quotas import GLOBAL
from price_collectors.quota_reading import QuotaReading, QuotasUnreadable, reading_frame

SOURCE = "gcp compute regions.list"
PROJECT_SOURCE = "gcp compute projects.get"


class GcpQuotaReader:
    cloud = "gcp"

    def __init__(self, project: str | None = None, regions_client: Any = None,
                 projects_client: Any = None) -> None:
        self.project = project
        self.regions_client, self.projects_client = regions_client, projects_client
        if regions_client is None or projects_client is None or project is None:
            self._default_clients()

    def _default_clients(self) -> None:
        try:
            credentials, self.project = gcp_cloud.credentials_and_project(self.project)
            from google.cloud import compute_v1
        except SdkMissing as exc:
            raise QuotasUnreadable(str(exc), "pip install 'costsched[gcp]'") from None
        except LookupError as exc:  # no credentials, no project
            raise QuotasUnreadable(str(exc), "gcloud auth application-default login") \
                from None
        self.regions_client = self.regions_client or compute_v1.RegionsClient(
            credentials=credentials)
        self.projects_client = self.projects_client or compute_v1.ProjectsClient(
            credentials=credentials)

    def read(self, regions: Sequence[str] = ()) -> QuotaReading:
        """The quotas of `regions` (default every region), and the project's."""
        from google.api_core import exceptions

        wanted = set(regions)
        rows: list[dict] = []
        try:
            for region in self.regions_client.list(project=self.project):
                if wanted and region.name not in wanted:
                    continue
                rows.extend(_row(region.name, q, SOURCE) for q in region.quotas
                            if gcp_cloud.QUOTA_METRIC.match(str(q.metric)))
        except exceptions.GoogleAPICallError as exc:
            raise _unreadable(exc, "compute.regions.list", self.project) from None
        error = fix = ""
        try:
            project = self.projects_client.get(project=self.project)
            rows.extend(_row(GLOBAL, q, PROJECT_SOURCE) for q in project.quotas
                        if str(q.metric) == gcp_cloud.ALL_REGIONS_GPUS)
        except exceptions.GoogleAPICallError as exc:
            unreadable = _unreadable(exc, "compute.projects.get", self.project)
            error, fix = str(unreadable), unreadable.fix
        return QuotaReading("gcp", reading_frame(rows), account=str(self.project),
                            error=error, fix=fix)


def _row(scope: str, quota: Any, source: str) -> dict:
    metric = str(quota.metric)
    return {"scope": scope, "code": metric, "name": metric,
            "unit": "vCPUs" if metric.endswith("CPUS") else "GPUs",
            "limit": float(quota.limit), "used": float(quota.usage), "source": source}


def _unreadable(exc: Any, permission: str, project: str | None) -> QuotasUnreadable:
    text = " ".join(str(getattr(exc, "message", "") or exc).split())
    if getattr(exc, "code", None) == 403 or "PERMISSION_DENIED" in text:
        return QuotasUnreadable(
            f"gcp: {permission} is not allowed in project {project} (403): plans cannot "
            "tell which offerings the project's quotas hold",
            f"gcloud projects add-iam-policy-binding {project} --member=user:YOU@EXAMPLE.COM "
            "--role=roles/compute.viewer")
    return QuotasUnreadable(f"gcp: {permission}: {text[:200]}",
                            "run `costsched quotas --refresh` again")
