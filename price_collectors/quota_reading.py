"""What a cloud's quota reader gives: its quotas as read (`QuotaReading`), or why they could
not be read, in one line naming the permission or the set-up that is missing
(`QuotasUnreadable`). The readers (`quotas_aws`, `quotas_gcp`, `quotas_azure`) are the
edge; `price_collectors.quotas` runs them and stores what they read."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from costsched.store.quotas import READING_COLUMNS


class QuotasUnreadable(RuntimeError):
    """A cloud's quotas cannot be read (no SDK, no credentials, a permission missing):
    str() is one line saying which; `fix` what to do."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.fix = fix


@dataclass
class QuotaReading:
    """One cloud's quotas as read (READING_COLUMNS) in the account (`account`: the GCP
    project or Azure subscription; '' where the reader does not know it). `error`: what
    was not read, in one line (a permission missing for part of it, or regions that
    failed), with its `fix`."""

    cloud: str
    rows: pd.DataFrame
    account: str = ""
    error: str = ""
    fix: str = ""
    failed: dict[str, str] = field(default_factory=dict)  # region -> one-line error


def reading_frame(rows: list[dict]) -> pd.DataFrame:
    """Rows of READING_COLUMNS as a frame (empty with those columns)."""
    return pd.DataFrame(rows, columns=READING_COLUMNS)
