"""Discovery: the GPU instance types a cloud sells, read from its own API.

AWS: `DescribeInstanceTypes` (GPU model, count and memory, vCPUs, memory) per region,
with `DescribeInstanceTypeOfferings` for the availability zones that offer each type;
both through boto3's paginators. GCP: the Compute Engine `machineTypes` aggregated list
(every zone's machine types; those with accelerators attached: A2, A3, A4, G2...), with
`discovery_gcp` adding the accelerator types and Billing Catalog SKUs. Azure: see
`discovery_azure` (Retail Prices API and resource SKUs). A type whose GPU the catalog's
vocabulary does not name (an inference chip, a graphics card) is counted, not kept.

What is found is kept in a CSV file (`discovered_path`), which the catalog reads beside its
bundled files: the collectors then price every discovered type (the bundled row wins where
both name a type). Its on-demand list price comes with the next `costsched collect`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from costsched import catalog, clouds
from costsched.clouds.base import message_field as _field
from costsched.model import InvalidInput
from costsched.vocabulary import counted, unprefixed
from price_collectors.discovered import COLUMNS, Discovery
from price_collectors.discovered import gpu_memory_gb as _gpu_memory

AWS_SOURCE = "discovered: aws DescribeInstanceTypes"
GCP_SOURCE = "discovered: gcp machineTypes.aggregatedList"
PAGE_SIZE = 100  # DescribeInstanceTypes' maximum



def aws_gpu_model(gpu: dict) -> str | None:
    """The catalog's name of a DescribeInstanceTypes GPU entry, or None: an A100 with
    80 GB is 'A100-80GB'; names outside the vocabulary are None."""
    name = str(gpu.get("Name", "")).strip()
    memory_gb = int(gpu.get("MemoryInfo", {}).get("SizeInMiB", 0)) / 1024
    if name.upper() == "A100" and memory_gb > 60:
        name = "A100-80GB"
    try:
        return catalog.gpu_model_name(name)
    except InvalidInput:
        return None


def aws_types(pages: Iterable[dict]) -> tuple[list[dict], Counter]:
    """GPU instance types of DescribeInstanceTypes pages (one region's)."""
    found, ignored = [], Counter()
    for page in pages:
        for item in page.get("InstanceTypes", []):
            gpus = item.get("GpuInfo", {}).get("Gpus", [])
            if not gpus:
                continue
            model = aws_gpu_model(gpus[0])
            if model is None or len({g.get("Name") for g in gpus}) > 1:
                ignored[f"aws: GPU not in the vocabulary ({gpus[0].get('Name', '?')})"] += 1
                continue
            found.append({
                "cloud": "aws", "instance_type": item["InstanceType"], "gpu_model": model,
                "gpu_count": sum(int(g.get("Count", 0)) for g in gpus),
                "gpu_memory_gb": round(int(gpus[0].get("MemoryInfo", {}).get("SizeInMiB", 0))
                                       / 1024),
                "vcpus": int(item.get("VCpuInfo", {}).get("DefaultVCpus", 0)),
                "memory_gb": int(item.get("MemoryInfo", {}).get("SizeInMiB", 0)) / 1024,
            })
    return found, ignored


def discover_aws(clients: Any, regions: Sequence[str]) -> Discovery:
    """Every GPU instance type offered in `regions`, with its regions and zones.

    `clients` makes EC2 clients per region (`price_collectors.aws.AwsClients`)."""
    by_type: dict[str, dict] = {}
    ignored: Counter = Counter()
    for region in regions:
        ec2 = clients.ec2(region)
        pages = ec2.get_paginator("describe_instance_types").paginate(
            Filters=[{"Name": "current-generation", "Values": ["true"]}],
            PaginationConfig={"PageSize": PAGE_SIZE})
        found, skipped = aws_types(pages)
        ignored.update(skipped)
        if not found:
            continue
        names = sorted(t["instance_type"] for t in found)
        offers = ec2.get_paginator("describe_instance_type_offerings").paginate(
            LocationType="availability-zone",
            Filters=[{"Name": "instance-type", "Values": names}])
        zones: dict[str, set[str]] = {}
        for page in offers:
            for offer in page.get("InstanceTypeOfferings", []):
                zones.setdefault(offer["InstanceType"], set()).add(offer["Location"])
        for spec in found:
            offered = zones.get(spec["instance_type"])
            if not offered:
                ignored["aws: type not offered in any zone of the region"] += 1
                continue
            row = by_type.setdefault(spec["instance_type"],
                                     {**spec, "regions": set(), "zones": set()})
            row["regions"].add(region)
            row["zones"].update(offered)
    return _found("aws", by_type, ignored, AWS_SOURCE)


def _found(cloud: str, by_type: dict[str, dict], ignored: Counter,
           source: str) -> Discovery:
    """A cloud's discovery from its types by name (their regions and zones as sets): in
    the catalog's columns, sorted by type, with the types the catalog does not know yet."""
    rows = [{**r, "regions": " ".join(sorted(r["regions"])), "zones": " ".join(sorted(r["zones"])),
             "source": source} for r in sorted(by_type.values(),
                                               key=lambda r: r["instance_type"])]
    types = pd.DataFrame(rows, columns=COLUMNS)
    new = [f"{cloud} {t}" for t in types["instance_type"] if catalog.lookup(cloud, t) is None]
    return Discovery(types, ignored, new)


def discover_gcp(client: Any, project: str) -> Discovery:
    """Every machine type with GPUs attached, in every zone, from `client`
    (compute_v1.MachineTypesClient or one like it) `aggregated_list` pages."""
    by_type: dict[str, dict] = {}
    ignored: Counter = Counter()
    for scope, scoped in client.aggregated_list(request={"project": project}):
        for machine in _field(scoped, "machine_types", "machineTypes", default=[]) or []:
            accelerators = list(_field(machine, "accelerators", default=[]) or [])
            if not accelerators:
                continue
            kind = str(_field(accelerators[0], "guest_accelerator_type",
                              "guestAcceleratorType", default=""))
            model = clouds.get("gcp").gpu_model_of(kind)
            if model is None:
                ignored[f"gcp: GPU not in the vocabulary ({kind})"] += 1
                continue
            name = str(_field(machine, "name"))
            zone = str(_field(machine, "zone", default="") or scope).rsplit("/", 1)[-1]
            row = by_type.setdefault(name, {
                "cloud": "gcp", "instance_type": name, "gpu_model": model,
                "gpu_count": sum(int(_field(a, "guest_accelerator_count",
                                            "guestAcceleratorCount", default=0))
                                 for a in accelerators),
                "gpu_memory_gb": _gpu_memory(model),
                "vcpus": int(_field(machine, "guest_cpus", "guestCpus", default=0)),
                "memory_gb": round(int(_field(machine, "memory_mb", "memoryMb", default=0))
                                   / 1024, 2),
                "regions": set(), "zones": set()})
            row["zones"].add(zone)
            region = clouds.get("gcp").region_of_zone(zone)
            if region:
                row["regions"].add(region)
    return _found("gcp", by_type, ignored, GCP_SOURCE)


def save(discovery: Discovery, path: Path | None = None) -> Path:
    """Merge the discovered types into the file (a cloud's rows replaced by its new ones)
    and make the catalog read it again."""
    path = path or catalog.discovered_path()
    old = catalog.discovered_types(path)
    clouds = set(discovery.types["cloud"])
    kept = old[~old["cloud"].isin(clouds)]
    frames = [f for f in (kept, discovery.types) if not f.empty]
    merged = (pd.concat(frames, ignore_index=True) if frames
              else pd.DataFrame(columns=COLUMNS))[COLUMNS]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    merged.to_csv(tmp, index=False)
    tmp.replace(path)
    catalog.reload()
    return path


@dataclass
class Refresh:
    """What a refresh found per cloud: its discovery, or why it could not look."""

    found: dict[str, Discovery] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    path: Path | None = None

    def lines(self) -> list[str]:
        out = []
        for cloud, found in sorted(self.found.items()):
            new = ", ".join(t.split(" ", 1)[1] for t in found.new) or "none"
            out.append(f"{cloud}: {counted(len(found.types), 'GPU instance type')}, new to the "
                       f"catalog: {new}")
            out += [f"{cloud}: left out {n}: {unprefixed(why, cloud)}"
                    for why, n in sorted(found.ignored.items())]
            out += [f"{cloud}: {unprefixed(note, cloud)}" for note in found.notes]
        out += [f"{cloud}: not refreshed: {unprefixed(why, cloud)}"
                for cloud, why in sorted(self.errors.items())]
        return out


def refresh(clouds: Sequence[str] = ("aws",), regions: Sequence[str] = (), *,
            aws_clients: Any = None, gcp_client: Any = None, gcp_project: str | None = None,
            gcp_accelerators: Any = None, gcp_catalog: Any = None,
            azure_session: Any = None, azure_skus: Any = None,
            azure_retail_url: str | None = None, path: Path | None = None) -> Refresh:
    """Discover each cloud's GPU instance types (in `regions`, else every region the
    account sees) and save them for the catalog; a cloud that cannot be read is named in
    `errors` with the reason, the others are saved."""
    from price_collectors.base import CollectorUnavailable

    result = Refresh()
    for cloud in clouds:
        if cloud == "gcp":
            try:
                if gcp_client is None:
                    client, project, gcp_accelerators, gcp_catalog = _gcp_client(gcp_project)
                else:
                    client, project = gcp_client
                found = discover_gcp(client, project)
                result.found[cloud] = _enrich_gcp(found, project, gcp_accelerators, gcp_catalog)
            except CollectorUnavailable as exc:
                result.errors[cloud] = str(exc)
            except Exception as exc:  # an API error: one line, the other clouds go on
                from price_collectors.base import one_line

                result.errors[cloud] = one_line(exc)
            continue
        if cloud == "azure":
            try:
                result.found[cloud] = _discover_azure(regions, azure_session, azure_skus,
                                                      azure_retail_url)
            except CollectorUnavailable as exc:
                result.errors[cloud] = str(exc)
            except Exception as exc:  # an API error: one line, the other clouds go on
                from price_collectors.azure import _http_error

                result.errors[cloud] = f"azure: {_http_error(exc)}"
            continue
        if cloud != "aws":
            result.errors[cloud] = ("not discovered yet: its bundled types and collected "
                                    "prices are used")
            continue
        try:
            clients = aws_clients or _aws_clients()
            chosen = list(regions) or _aws_regions(clients)
            result.found[cloud] = discover_aws(clients, chosen)
        except CollectorUnavailable as exc:
            result.errors[cloud] = str(exc)
        except Exception as exc:  # an API error: one line, the other clouds go on
            from price_collectors.aws import _aws_error

            result.errors[cloud] = _aws_error(exc)
    for found in result.found.values():
        result.path = save(found, path)
    return result


def _discover_azure(regions: Sequence[str], session: Any, skus: Any,
                    retail_url: str | None) -> Discovery:
    """Azure's GPU sizes: the Retail Prices API, with resource SKUs where credentials are."""
    import os

    from price_collectors import discovery_azure
    from price_collectors.azure import ENV_URL

    url = retail_url or os.environ.get(ENV_URL) or discovery_azure.RETAIL_URL
    session = session or _azure_session()
    if skus is None:
        found = discovery_azure.credentials()
        if found is not None:
            subscription, token = found
            skus = discovery_azure.resource_skus(session, subscription, token())
    return discovery_azure.discover_azure(session, regions=regions, skus=skus,
                                          retail_url=url)


def _azure_session() -> Any:
    """A requests session with retries for Azure's public APIs."""
    from costsched.clouds import SdkMissing
    from costsched.clouds.azure import http_session
    from price_collectors.base import CollectorUnavailable

    try:
        return http_session(6, 0.5)
    except SdkMissing as exc:
        raise CollectorUnavailable(str(exc)) from None


def _aws_clients() -> Any:
    from price_collectors.aws import AwsClients

    clients = AwsClients()
    clients.check_credentials()
    return clients


def _enrich_gcp(found: Discovery, project: str, accelerators: Any, billing: Any) -> Discovery:
    """GPU memory from the accelerator types, and pricing notes from the Billing Catalog
    (each client's first page request made here; either may be None)."""
    from price_collectors import discovery_gcp
    from price_collectors.gcp import COMPUTE_SERVICE

    pages = (accelerators.aggregated_list(request={"project": project})
             if accelerators is not None else None)
    skus = (billing.list_skus(request={"parent": COMPUTE_SERVICE, "page_size": 5000})
            if billing is not None else None)
    return discovery_gcp.enrich(found, pages, skus)


def _gcp_client(project: str | None) -> tuple[Any, str, Any, Any]:
    """Machine types, the project, accelerator types and (if installed) Billing Catalog
    clients, all on Application Default Credentials."""
    from costsched.clouds import SdkMissing
    from costsched.clouds.gcp import credentials_and_project
    from price_collectors.base import CollectorUnavailable

    try:
        from google.cloud import compute_v1

        credentials, chosen = credentials_and_project(project)
    except ImportError:
        raise CollectorUnavailable("gcp: google-cloud-compute is not installed: pip install "
                                   "'costsched[gcp]'") from None
    except (LookupError, SdkMissing) as exc:
        raise CollectorUnavailable(str(exc)) from None
    try:
        from google.cloud import billing_v1

        billing = billing_v1.CloudCatalogClient(credentials=credentials)
    except ImportError:
        billing = None
    return (compute_v1.MachineTypesClient(credentials=credentials), chosen,
            compute_v1.AcceleratorTypesClient(credentials=credentials), billing)


def _aws_regions(clients: Any) -> list[str]:
    answer = clients.ec2(clients.home_region()).describe_regions(AllRegions=False)
    return sorted(r["RegionName"] for r in answer.get("Regions", []))
