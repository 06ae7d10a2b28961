"""GCP discovery beyond machine types: the accelerator types and the Billing Catalog.

- `acceleratorTypes` aggregated list (Compute Engine): every accelerator each zone offers,
  with its description ("NVIDIA H200 141GB"); it gives a new GPU model its memory per card
  (no bundled type of the model may say it) and counts the accelerators the catalog's
  vocabulary does not name.
- Cloud Billing Catalog SKUs (Compute Engine service): the on-demand and spot component
  SKUs per region (attached GPUs; A2/A3/G2/N1 machine cores and RAM), read the way
  `costsched collect` reads them, to say for each discovered type in how many regions the
  next collection can price it, on-demand and spot, or that it cannot.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pandas as pd

from costsched.clouds.gcp import GCP
from costsched.vocabulary import counted
from price_collectors import gcp as gcp_prices

_MEMORY = re.compile(r"(\d+)\s*GB\b", re.IGNORECASE)


def accelerator_types(pages: Any) -> tuple[dict[str, dict], Counter]:
    """{catalog GPU model: {"memory_gb", "zones"}} of an acceleratorTypes aggregated list
    (REST dicts or the client's messages), and the accelerators outside the vocabulary."""
    from costsched.clouds.base import message_field as _field

    models: dict[str, dict] = {}
    unknown: set[str] = set()
    items = pages.items() if isinstance(pages, dict) else pages
    for scope, scoped in items:
        for accelerator in _field(scoped, "accelerator_types", "acceleratorTypes",
                                  default=[]) or []:
            name = str(_field(accelerator, "name", default=""))
            model = GCP.gpu_model_of(name)
            if model is None:
                unknown.add(name)
                continue
            zone = str(_field(accelerator, "zone", default="") or scope).rstrip("/")
            found = _MEMORY.search(str(_field(accelerator, "description", default="")))
            entry = models.setdefault(model, {"memory_gb": 0, "zones": set()})
            entry["zones"].add(zone.rsplit("/", 1)[-1])
            if found:
                entry["memory_gb"] = max(entry["memory_gb"], int(found.group(1)))
    ignored = Counter({f"gcp: accelerator not in the vocabulary ({n})": 1 for n in unknown})
    return models, ignored


def pricing(types: pd.DataFrame, skus: Any) -> dict[str, str]:
    """{instance type: what the next collection can price of it} from Billing Catalog SKUs:
    the regions (of the type's own) holding its core, RAM and GPU SKUs per market (its GPU
    slice SKU for an A4 machine)."""
    components, _ = gcp_prices.sku_components(list(skus), set())
    out = {}
    for spec in types.to_dict("records"):
        parts = gcp_prices.machine_parts(spec)
        name = spec["instance_type"]
        if parts is None:
            out[name] = (f"not priced by collect: its family ({name.split('-')[0]}) is not "
                         "billed by the core/RAM/GPU SKUs collect reads")
            continue
        family = parts[0]
        regions = str(spec.get("regions") or "").split()
        counts = {}
        for market in ("on_demand", "spot"):
            counts[market] = sum(
                all(k in components for k in (
                    ((r, market, "slice", family),) if family in gcp_prices.SLICE_FAMILIES
                    else ((r, market, "core", family), (r, market, "ram", family),
                          (r, market, "gpu", spec["gpu_model"]))))
                for r in regions)
        out[name] = (f"Billing Catalog SKUs price it on-demand in {counts['on_demand']} and "
                     f"spot in {counts['spot']} of its {counted(len(regions), 'region')}")
    return out


def enrich(found: Any, accelerators: Any = None, skus: Any = None) -> Any:
    """A machine-type discovery with GPU memory filled from the accelerator types (where
    the catalog had none), their unknown accelerators counted, and a pricing note per
    type from the Billing Catalog SKUs."""
    if accelerators is not None:
        models, ignored = accelerator_types(accelerators)
        found.ignored.update(ignored)
        types = found.types
        for i, row in types.iterrows():
            memory = models.get(row["gpu_model"], {}).get("memory_gb", 0)
            if not int(row["gpu_memory_gb"] or 0) and memory:
                types.at[i, "gpu_memory_gb"] = memory
    if skus is not None:
        for name, note in pricing(found.types, skus).items():
            found.notes.append(f"{name}: {note}")
    return found
