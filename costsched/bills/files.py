"""Export files as tables: CSV (plain or gzip) and Parquet, read from their bytes."""

from __future__ import annotations

import gzip
import io
import zlib

import pandas as pd

from costsched.bills.lines import BadExport

SUFFIXES = (".csv", ".csv.gz", ".gz", ".parquet")


def is_export_file(name: str) -> bool:
    """Whether an object of an export's folder is one of its data files (not a manifest)."""
    return name.lower().endswith(SUFFIXES)


def read_table(data: bytes, name: str) -> pd.DataFrame:
    """The rows of an export file `name` (its suffix says its format), every column as text
    for CSV; one BadExport line when it is not what its name says."""
    lower = name.lower()
    try:
        if lower.endswith(".parquet"):
            import pyarrow.parquet as pq

            return pq.read_table(io.BytesIO(data)).to_pandas(maps_as_pydicts="lossy")
        if lower.endswith(".gz"):
            data = gzip.decompress(data)
        text = data.decode("utf-8-sig")
        return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError, ValueError) as exc:
        kind = "a Parquet file" if lower.endswith(".parquet") else \
            "a gzip-compressed CSV file" if lower.endswith(".gz") else "a UTF-8 CSV file"
        raise BadExport(f"{name}: not {kind} ({_reason(exc)}); expected an export file: "
                        f"{', '.join(SUFFIXES)}") from None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:120]
