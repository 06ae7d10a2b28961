"""The shared vocabulary of price frames: the columns that name an offering and its
hardware, and times as UTC epoch seconds. A leaf: the store, the optimizer and the
policies all speak it, none of them owns it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd

OFFERING_KEY = ["cloud", "region", "zone", "instance_type", "market", "os"]
OFFERING_ATTRS = ["gpu_model", "gpu_count", "vcpus", "memory_gb"]

def to_epoch_seconds(times: pd.Series | Sequence[datetime]) -> np.ndarray:
    """UTC epoch seconds of aware times (naive ones are taken as UTC)."""
    ts = pd.to_datetime(pd.Series(times), utc=True)
    return ((ts - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(seconds=1)).to_numpy(dtype="int64")
