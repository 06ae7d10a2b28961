"""The throughput table's rows, read without pandas: the bundled table, the user's
measurement file (validated: errors name the file, row and field), and one layer of rows
over another; frames of them are built only for a caller that wants one
(`costsched.throughput` looks figures up in them)."""

from __future__ import annotations

import csv
import math
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from functools import cache
from importlib import resources
from pathlib import Path

import platformdirs

from costsched import file_limits
from costsched.catalog import gpu_model_name
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput

COLUMNS = ["model", "gpu_model", "gpu_count", "steps_per_second", "source"]
ENV_USER_FILE = "COSTSCHED_THROUGHPUTS"


@cache  # a table is built per plan: each of its rows' names keyed again
def model_key(name: str) -> str:
    """A spelling-insensitive key: 'ResNet-50 (batch size 64)' == 'resnet50 bs64'."""
    key = re.sub(r"batch\s*size", "bs", name.lower())
    return re.sub(r"[^a-z0-9]", "", key)


@cache
def bundled_rows() -> tuple[tuple, ...]:
    """The bundled table's rows (COLUMNS), read without pandas."""
    with resources.files("costsched.data").joinpath("throughputs.csv").open(
            "r", newline="") as fh:
        return tuple((r["model"], r["gpu_model"], int(r["gpu_count"]),
                      float(r["steps_per_second"]), r["source"])
                     for r in csv.DictReader(fh))


@cache
def bundled() -> pd.DataFrame:
    """The bundled table as a frame (`bundled_rows`)."""
    return pd.DataFrame(list(bundled_rows()), columns=COLUMNS)


def user_path() -> Path:
    """The user's measurements: $COSTSCHED_THROUGHPUTS, else throughputs.csv in the user
    data directory (beside the default price store)."""
    if os.environ.get(ENV_USER_FILE):
        return Path(os.environ[ENV_USER_FILE]).expanduser()
    return Path(platformdirs.user_data_dir("costsched")) / "throughputs.csv"


def read_measurements(path: Path, limit_mb: float | None = None) -> pd.DataFrame:
    """`measurement_rows` of the file as a frame (COLUMNS)."""
    return pd.DataFrame(measurement_rows(path, limit_mb), columns=COLUMNS)


def measurement_rows(path: Path, limit_mb: float | None = None) -> list[tuple]:
    """A measurement CSV (model, gpu_model, gpu_count, steps_per_second[, source]),
    validated, as rows (COLUMNS); errors name the file, row and field. A file over
    `limit_mb` (default `file_limits.THROUGHPUTS`'s) is refused before it is read."""
    file_limits.check(path, file_limits.THROUGHPUTS, limit_mb)
    try:
        # utf-8-sig: a spreadsheet's UTF-8 CSV starts with a byte order mark
        with path.open(newline="", encoding="utf-8-sig") as fh:
            lines = list(csv.reader(fh, strict=True))
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path}: a directory, not a CSV file") from None
    except (csv.Error, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: not a CSV file ({exc})") from None
    lines = [line for line in lines if line]  # blank lines, as pandas skips them
    if not lines:
        raise InvalidInput(f"{path}: not a CSV file (no columns to parse from file)")
    header, body = [h.strip() for h in lines[0]], lines[1:]
    for i, line in enumerate(body, start=2):
        if len(line) > len(header):
            raise InvalidInput(f"{path}: not a CSV file (row {i}: expected {len(header)} "
                               f"fields, saw {len(line)})")
    _check_columns(header, str(path))
    records = (dict(zip(header, line + [""] * (len(header) - len(line)), strict=True))
               for line in body)
    return valid_rows(({**r, "gpu_count": _number(r["gpu_count"]),
                        "steps_per_second": _number(r["steps_per_second"])} for r in records),
                      where=str(path))


def _number(field: str) -> object:
    """A CSV field as the number it writes (an int, a float), else as written."""
    for kind in (int, float):
        try:
            return kind(field)
        except ValueError:
            pass
    return field


REQUIRED = ["model", "gpu_model", "gpu_count", "steps_per_second"]


def _check_columns(columns: Sequence[str], where: str) -> None:
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise InvalidInput(f"{where}: missing column(s) {', '.join(missing)}: expected "
                           f"{', '.join(REQUIRED)}[, source]")


def validate_measurements(frame: pd.DataFrame, where: str = "measurements") -> pd.DataFrame:
    """The rows in canonical form (GPU names, int counts, a source) or InvalidInput."""
    _check_columns(list(frame.columns), where)
    columns = list(frame.columns)
    records = (dict(zip(columns, values, strict=True))
               for values in frame.itertuples(index=False, name=None))
    return pd.DataFrame(valid_rows(records, where), columns=COLUMNS)


def valid_rows(records: Iterable[Mapping], where: str = "measurements") -> list[tuple]:
    """Measurement records (model, gpu_model, gpu_count, steps_per_second[, source]) as
    rows in canonical form (GPU names, int counts, a source), or InvalidInput naming the
    row (counted from 2: row 1 is a file's header) and field."""
    rows = []
    for i, r in enumerate(records, start=2):
        at = f"{where}: row {i}"
        model = "" if _missing(r["model"]) else str(r["model"]).strip()
        if not model:
            raise InvalidInput(f"{at}: field model is empty: expected a model name")
        try:
            gpu = gpu_model_name(r["gpu_model"])
        except InvalidInput as exc:
            raise InvalidInput(f"{at}: field gpu_model: {exc}") from None
        count = _positive(r["gpu_count"], f"{at}: field gpu_count", whole=True)
        sps = _positive(r["steps_per_second"], f"{at}: field steps_per_second")
        source = r.get("source")
        source = "user measured" if _missing(source) or not str(source).strip() else \
            str(source)
        rows.append((model, gpu, int(count), sps, source))
    return rows


def _missing(value: object) -> bool:
    """None, an empty field, or a frame's missing value (NaN, NA)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if "pandas" in sys.modules:  # its NA: none without it
        import pandas

        return value is pandas.NA or value is pandas.NaT
    return False


def _positive(value: object, where: str, whole: bool = False) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number <= 0 or (whole and number != int(number)):
        kind = "a whole number >= 1" if whole else "a positive number"
        raise InvalidInput(f"{where} {value!r}: expected {kind}")
    return number


def load_user(path: Path | None = None) -> pd.DataFrame:
    """The user's measurements (empty when the file does not exist)."""
    return pd.DataFrame(user_rows(path), columns=COLUMNS)


def user_rows(path: Path | None = None) -> list[tuple]:
    """The user's measurements as rows (COLUMNS; none when the file does not exist)."""
    path = path or user_path()
    return measurement_rows(path) if path.exists() else []


def save_user(rows: pd.DataFrame, path: Path | None = None) -> Path:
    """Merge measurements into the user file (a new row replaces the same model/GPU/count)
    atomically; the path written."""
    path = path or user_path()
    merged = _overlay(load_user(path), validate_measurements(rows, where="new measurements"))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    merged.sort_values(["model", "gpu_model", "gpu_count"]).to_csv(tmp, index=False)
    tmp.replace(path)
    return path


def measured_today(source: str | None = None) -> str:
    day = datetime.now(timezone.utc).date().isoformat()
    return source or f"user measured ({day})"


def _overlay(base: pd.DataFrame, top: pd.DataFrame) -> pd.DataFrame:
    """`_overlay_rows` of two frames, as a frame."""
    if top.empty:
        return base[COLUMNS].reset_index(drop=True)
    return pd.DataFrame(_overlay_rows(frame_rows(base), frame_rows(top)), columns=COLUMNS)


def _overlay_rows(base: Iterable[tuple], top: Sequence[tuple]) -> list[tuple]:
    """Rows of `top` replace rows of `base` with the same (model key, GPU model, count);
    the rest of `base` first, in its order, then `top`."""
    replaced = {(model_key(str(m)), g, int(c)) for m, g, c, *_ in top}
    return [r for r in base if (model_key(str(r[0])), r[1], int(r[2])) not in replaced] + \
        list(top)


def frame_rows(frame: pd.DataFrame) -> list[tuple]:
    """A table frame's rows (COLUMNS)."""
    return list(frame[COLUMNS].itertuples(index=False, name=None))
