"""Which of an account's quotas an instance draws on, per cloud: the one place that maps an
offering (cloud, region, instance type, market, GPUs, vCPUs) to its quotas.

A `Need` names a quota by where it holds (a region, or `GLOBAL` for a quota of the whole
project or account), its code as the cloud lists it, its unit, and how much of it one
instance takes. Each cloud's module says its own mapping (`aws.quota_needs`,
`gcp.quota_needs`, `azure.quota_needs`) and how an increase is asked for
(`request_line`); the planner, the deciders and the launch failover read them here.

Some quotas apply one of several codes: GCP's Spot VMs draw on the preemptible quota where
the project has one, else on the standard one; an Azure size's family quota goes by a name
the usage list spells its own way. `Need.codes` lists them in that order, and
`applies` picks the one that holds from what was read.
"""

from __future__ import annotations

from costsched.clouds.quota_need import GLOBAL, UNITS, Need

__all__ = ["GLOBAL", "UNITS", "Need", "needs", "request_line", "where"]


def needs(cloud: str, region: str, instance_type: str, market: str, gpu_model: str,
          gpu_count: int, vcpus: int) -> tuple[Need, ...]:
    """The quotas one instance of the offering draws on (empty where none is known: a
    family no mapping names, or vCPUs unknown where the quota counts them)."""
    from costsched.clouds import aws, azure, gcp

    mapping = {"aws": aws.quota_needs, "gcp": gcp.quota_needs, "azure": azure.quota_needs}
    found = mapping.get(cloud)
    if found is None:
        return ()
    return found(region, instance_type, market, gpu_model or "", int(gpu_count or 0),
                 int(vcpus or 0))


def request_line(cloud: str, code: str, scope: str, value: float, account: str = "") -> str:
    """The command (or the console page) that asks the cloud for `value` of quota `code`
    in `scope`."""
    from costsched.clouds import aws, azure, gcp

    lines = {"aws": aws.quota_request, "gcp": gcp.quota_request,
             "azure": azure.quota_request}
    return lines[cloud](code, scope, value, account)


def where(scope: str) -> str:
    """'in us-east-1', or 'for the whole project' for a global quota."""
    return "across all regions" if scope == GLOBAL else f"in {scope}"
