"""A catalog with general-purpose CPU instance types (GPU count 0) added, for tests of CPU
tasks: the rows are public list and spot prices (AWS, Google Cloud and Azure price pages,
2025-05) of a few types, in the bundled catalog's columns."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pandas as pd
import pytest

from costsched import catalog

TYPES = """cloud,instance_type,gpu_model,gpu_count,gpu_memory_gb,vcpus,memory_gb
aws,m6i.large,,0,0,2,8
aws,m6i.2xlarge,,0,0,8,32
aws,c6i.4xlarge,,0,0,16,32
aws,r6i.2xlarge,,0,0,8,64
gcp,n2-standard-8,,0,0,8,32
gcp,n2-highmem-16,,0,0,16,128
azure,Standard_D8s_v5,,0,0,8,32
"""
ON_DEMAND = """cloud,region,instance_type,usd_per_hour,as_of,source
aws,us-east-1,m6i.large,0.096,2025-05,test row
aws,us-east-1,m6i.2xlarge,0.384,2025-05,test row
aws,us-west-2,m6i.2xlarge,0.384,2025-05,test row
aws,us-east-1,c6i.4xlarge,0.68,2025-05,test row
aws,us-east-1,r6i.2xlarge,0.504,2025-05,test row
gcp,us-central1,n2-standard-8,0.3885,2025-05,test row
gcp,us-central1,n2-highmem-16,1.048,2025-05,test row
azure,eastus,Standard_D8s_v5,0.384,2025-05,test row
"""
SPOT = """cloud,region,zone,instance_type,usd_per_hour,as_of,source
aws,us-east-1,,m6i.2xlarge,0.151,2025-05,test row
gcp,us-central1,,n2-standard-8,0.0780,2025-05,test row
"""
EXTRA = {"instance_types.csv": TYPES, "on_demand_prices.csv": ON_DEMAND,
         "spot_prices.csv": SPOT}


def _clear() -> None:
    for name in dir(catalog):
        clear = getattr(getattr(catalog, name), "cache_clear", None)
        if clear is not None:
            clear()


def with_cpu_types(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The bundled catalog plus CPU instance types, for a fixture's duration."""
    read = catalog._read

    def with_cpus(name: str) -> pd.DataFrame:
        frame = read(name)
        if name in EXTRA:
            frame = pd.concat([frame, pd.read_csv(io.StringIO(EXTRA[name]))],
                              ignore_index=True)
        return frame

    monkeypatch.setattr(catalog, "_read", with_cpus)
    _clear()
    yield
    monkeypatch.undo()
    _clear()
