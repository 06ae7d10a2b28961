"""What a discovery of the clouds' GPU instance types finds: the types in the catalog's
columns, what was left out, and what is new (one vocabulary for every cloud's discovery)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from costsched import catalog

COLUMNS = [*catalog.TYPE_COLUMNS, "regions", "zones", "source"]


@dataclass
class Discovery:
    types: pd.DataFrame  # COLUMNS
    ignored: Counter = field(default_factory=Counter)
    new: list[str] = field(default_factory=list)  # "cloud instance_type" not in the catalog
    notes: list[str] = field(default_factory=list)  # what the next collection can price


def gpu_memory_gb(model: str) -> int:
    """GB per GPU of a model, as the catalog's types of it say (0 if none does)."""
    types = catalog.instance_types()
    known = types.loc[types["gpu_model"] == model, "gpu_memory_gb"]
    return int(known.max()) if len(known) else 0
