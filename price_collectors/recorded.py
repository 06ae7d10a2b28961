"""Import recorded price logs into observation frames.

Formats, told apart by suffix and header:
- `*.json`: an EC2 `DescribeSpotPriceHistory` response body (AWS spot history);
- `*.csv` whose header starts with `Date,`: an Azure daily spot price log, one column per
  VM size (`NC6s v3`, ...), values like `$0.60313`; the region is the file's stem
  (`us_east.csv` -> eastus, or an ARM region name such as `eastus.csv`);
- `*.csv` / `*.parquet` with the store's export columns (`costsched prices export`).
A file is the unit of validity: one bad row rejects its file with a one-line error
naming the file and row, and the other files of the call are still imported. Every row
meets the rules all sources share (`price_collectors.base.problems`): known GPUs, times in
ISO 8601 with a zone (Azure's m/d/Y dates, that format's own, excepted) and a sane price.
"""

from __future__ import annotations

import csv
import json
import os
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from costsched import catalog, file_limits
from costsched.clouds import place_problem
from costsched.clouds.aws import AWS
from costsched.clouds.azure import AZURE
from costsched.model import ALL_MARKETS, InvalidInput
from costsched.store import OBSERVATION_COLUMNS
from costsched.validation import in_range, zoned_time, zoned_times
from costsched.vocabulary import canonical, closest, did_you_mean
from price_collectors.base import PRICE_PROBLEMS, field_problems, problems, rows_frame

SUFFIXES = (".json", ".csv", ".parquet")
AZURE_MAPPING_HEADER = ["Instance", "GPU type", "# GPUs"]
SPOT_HISTORY_FIELDS = ("AvailabilityZone", "InstanceType", "ProductDescription", "SpotPrice",
                       "Timestamp")
# EC2 ProductDescription -> the offering's os.
AWS_PRODUCTS = {
    "Linux/UNIX": "linux",
    "Linux/UNIX (Amazon VPC)": "linux-vpc",
    "Windows": "windows",
    "Windows (Amazon VPC)": "windows",
    "SUSE Linux": "suse",
    "SUSE Linux (Amazon VPC)": "suse",
    "Red Hat Enterprise Linux": "rhel",
    "Red Hat Enterprise Linux (Amazon VPC)": "rhel",
}
# Geography words of the recorded Azure file names -> their spelling in ARM region names.
_AZURE_GEOS = {"us": "us", "eu": "europe", "europe": "europe", "asia": "asia", "uk": "uk",
               "japan": "japan", "australia": "australia", "canada": "canada",
               "brazil": "brazil", "india": "india", "korea": "korea", "france": "france",
               "germany": "germany", "norway": "norway", "switzerland": "switzerland"}
_AZURE_DIRECTIONS = {"east", "west", "north", "south", "central", "southeast", "northeast"}


class FileError(InvalidInput):
    """A recorded file that cannot be imported; str() is the one-line message."""

    def __init__(self, path: Path, message: str, row: int | None = None) -> None:
        where = f"{path}" + (f": row {row}" if row is not None else "")
        super().__init__(f"{where}: {message}")


@dataclass
class ParsedFiles:
    """What reading a set of paths gave: observation frames and per-file errors."""

    frames: list[pd.DataFrame] = field(default_factory=list)
    files: int = 0
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def observations(self) -> pd.DataFrame:
        if not self.frames:
            return pd.DataFrame(columns=OBSERVATION_COLUMNS)
        return pd.concat(self.frames, ignore_index=True)


def expand(paths: Iterable[str | Path]) -> tuple[list[Path], list[str]]:
    """The files to read under `paths` (directories recursively) and errors for bad paths."""
    files: list[Path] = []
    errors: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(p for p in sorted(path.rglob("*")) if p.suffix in SUFFIXES)
        elif path.is_file():
            if path.suffix not in SUFFIXES:
                errors.append(f"{path}: unknown kind of file: expected {', '.join(SUFFIXES)}")
            else:
                files.append(path)
        else:
            errors.append(f"{path}: cannot read: no such file or directory")
    return files, errors


def read_paths(
    paths: Iterable[str | Path], progress: Callable[[Path], None] | None = None,
    limit_mb: float | None = None,
) -> ParsedFiles:
    """Parse every file under `paths`; a bad file becomes an error, never an exception.
    A file over `limit_mb` (default `file_limits.IMPORT`'s) is refused before it is read."""
    found, errors = expand(paths)
    files = []
    for path in found:
        too_large = file_limits.problem(path, file_limits.IMPORT, limit_mb)
        if too_large is None:
            files.append(path)
        else:
            errors.append(too_large)
    result = ParsedFiles(errors=errors)
    mappings = _azure_mappings(files, result)
    unchecked: list[tuple[Path, pd.DataFrame]] = []
    for path in files:
        if path in mappings:
            continue
        try:
            frame = read_file(path, mappings.get(path.parent.parent / "instance_mapping.csv")
                              or mappings.get(path.parent / "instance_mapping.csv"),
                              check=False)
        except InvalidInput as exc:
            result.errors.append(str(exc))
        except UnicodeDecodeError:
            result.errors.append(f"{path}: cannot read: not UTF-8 text")
        except OSError as exc:
            result.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        except (ValueError, TypeError) as exc:  # a malformed CSV (pandas' ParserError...)
            result.errors.append(f"{path}: cannot read: {' '.join(str(exc).split())}")
        else:
            if _ROW in frame.columns:
                unchecked.append((path, frame))
            else:
                result.frames.append(frame)
                result.files += 1
        if progress:
            progress(path)
    for _path, frame in _check_all(unchecked, result.errors):
        result.frames.append(frame)
        result.files += 1
    return result


def _check_all(parsed: list[tuple[Path, pd.DataFrame]],
               errors: list[str]) -> list[tuple[Path, pd.DataFrame]]:
    """The files whose every row meets the shared rules, checked in one batch (per file,
    the checks cost more than the parsing); each other file becomes an error."""
    if not parsed:
        return []
    batch = pd.concat([f for _, f in parsed], ignore_index=True)
    reasons = problems(batch)
    times = zoned_times(batch["effective_at"])[0]
    out, start = [], 0
    for path, frame in parsed:
        rows = slice(start, start + len(frame))
        own = reasons.iloc[rows].set_axis(frame.index)
        own_times = times.iloc[rows].set_axis(frame.index)
        start += len(frame)
        try:
            out.append((path, _checked(path, frame, own, own_times)))
        except FileError as exc:
            errors.append(str(exc))
    return out


def read_file(path: Path, azure_mapping: dict[str, tuple[str, int]] | None = None, *,
              check: bool = True) -> pd.DataFrame:
    """One recorded file as an observation frame; FileError when it is not valid. With
    `check` False, a spot-history or Azure file comes back unchecked, with its helper
    columns, for `read_paths` to check in one batch."""
    if path.suffix == ".json":
        frame = read_spot_history_json(path)
        return _checked(path, frame) if check else frame
    if path.suffix == ".parquet":
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises many kinds for a damaged file
            raise FileError(path, f"not a readable Parquet file ({_one_line(exc)})") from None
        return validate_export(path, frame)
    header = _csv_header(path)
    if header[:1] == ["Date"]:
        frame = read_azure_daily_csv(path, azure_mapping)
        return _checked(path, frame) if check else frame
    if header == OBSERVATION_COLUMNS:
        return validate_export(path, _read_export_csv(path))
    if len(set(header) & set(OBSERVATION_COLUMNS)) * 2 > len(OBSERVATION_COLUMNS):
        _missing_columns(path, header)  # the export's columns, but for some
    raise FileError(
        path,
        f"unexpected CSV header {','.join(header)!r}: expected an Azure daily price log "
        f"(Date,<VM size>,...) or the export format ({','.join(OBSERVATION_COLUMNS)})",
    )


def _csv_header(path: Path) -> list[str]:
    # A spreadsheet's UTF-8 CSV starts with a byte order mark: no part of the header.
    with path.open(newline="", encoding="utf-8-sig") as fh:
        first = fh.readline()
    return [h.strip() for h in first.strip().split(",")] if first else []


def _read_export_csv(path: Path) -> pd.DataFrame:
    """An export CSV's rows as text; FileError naming a row with more fields than the
    header (pandas would else take the first field of such a row as its index, and read
    each other under the name of the one before)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            return pd.read_csv(path, dtype=str, keep_default_na=False, index_col=False,
                               encoding="utf-8-sig")
        except (pd.errors.ParserWarning, pd.errors.ParserError):
            pass  # the row is found below; a file malformed otherwise is read again
    with path.open(newline="", encoding="utf-8-sig") as fh:
        for row, fields in enumerate(csv.reader(fh), start=1):
            if len(fields) > len(OBSERVATION_COLUMNS):
                raise FileError(path, f"{len(fields)} fields: expected "
                                f"{len(OBSERVATION_COLUMNS)}, as the header has (a value "
                                "holding a comma is written in double quotes)", row)
    return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")


def _missing_columns(path: Path, header: list[str]) -> None:
    """FileError for a header of the export's columns but for some: those missing, and the
    header's unknown names that look like them."""
    missing = [c for c in OBSERVATION_COLUMNS if c not in header]
    unknown = [h for h in header if h not in OBSERVATION_COLUMNS]
    said = f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
    close = [n for c in missing for n in closest(c, unknown)[:1]]
    if close:
        meant = [c for c in missing if closest(c, unknown)]
        said += (f": the header has {', '.join(close)}; did you mean "
                 + " or ".join(repr(m) for m in meant) + "?")
    else:
        said += f": expected the export's columns ({','.join(OBSERVATION_COLUMNS)})"
    raise FileError(path, said)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


# Helper columns of a file's frame until it is checked: the file row of each observation,
# and the name its price has in that file.
_ROW, _PRICE = "_row", "_price_field"


def _checked(path: Path, frame: pd.DataFrame, reasons: pd.Series | None = None,
             times: pd.Series | None = None) -> pd.DataFrame:
    """The frame without its helper columns when every row meets the shared rules (its
    `reasons`, and its rows' `times`, computed here if not given); else a FileError naming
    the first bad row and each of its fields that breaks its own rule (`field_problems`),
    else the rule across fields it breaks."""
    reasons = problems(frame) if reasons is None else reasons
    bad = reasons.notna().to_numpy()
    if bad.any():
        i = int(bad.argmax())
        said = []
        for reason in field_problems(frame.iloc[[i]]) or [reasons.iloc[i]]:
            if reason.split(" (")[0] in PRICE_PROBLEMS:
                price = frame["usd_per_hour"].iloc[i]
                shown = repr(price) if isinstance(price, str) else f"{float(price):g}"
                reason = f"{frame[_PRICE].iloc[i]} {shown}: {reason}"
            said.append(reason)
        raise FileError(path, "; ".join(said), int(frame[_ROW].iloc[i]))
    _not_ahead(path, frame, times=times)
    return frame.drop(columns=[_ROW, _PRICE])


# A price is an observation: one dated later than now (beyond a skew between clocks) is a
# mistyped date or a price not in effect yet. Prices are read as of a time (the last at or
# before it), so a stored one would never be charged early; it is refused all the same,
# as nothing could show it until that date and a mistyped year would go unseen.
CLOCK_SKEW = pd.Timedelta(minutes=10)


def _not_ahead(path: Path, frame: pd.DataFrame, now: pd.Timestamp | None = None,
               times: pd.Series | None = None) -> None:
    """FileError naming the first row dated later than `now` (default the clock); `times`:
    the rows' effective_at as UTC times, when already read."""
    times = zoned_times(frame["effective_at"])[0] if times is None else times
    now = pd.Timestamp.now(tz="UTC") if now is None else now
    ahead = (times > now + CLOCK_SKEW).to_numpy()
    if ahead.any():
        i = int(ahead.argmax())
        raise FileError(path, f"effective_at {str(frame['effective_at'].iloc[i])!r}: later "
                        f"than now ({now:%Y-%m-%dT%H:%MZ}): expected the time the price took "
                        "effect, not a future one (import a price once it holds)",
                        int(frame[_ROW].iloc[i]))


# --- AWS DescribeSpotPriceHistory bodies ---------------------------------------------


def read_spot_history_json(path: Path) -> pd.DataFrame:
    try:
        body = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise FileError(
            path,
            f"not valid JSON (line {exc.lineno}, column {exc.colno}): expected a "
            "DescribeSpotPriceHistory response body",
        ) from None
    if not isinstance(body, dict) or not isinstance(body.get("SpotPriceHistory"), list):
        raise FileError(
            path, 'expected a DescribeSpotPriceHistory body: {"SpotPriceHistory": [...]}'
        )
    frame = spot_history_frame(body["SpotPriceHistory"], source=f"import:{path.name}", path=path)
    return frame.assign(**{_ROW: range(1, len(frame) + 1), _PRICE: "SpotPrice"})


def spot_history_frame(
    items: list[dict], source: str, path: Path | str = "response"
) -> pd.DataFrame:
    """Observation frame of `SpotPriceHistory` items (recorded files and live responses)."""
    where = Path(str(path))
    return rows_frame((_spot_row(where, n, item) for n, item in enumerate(items, start=1)),
                      source)


def _spot_row(path: Path, n: int, item: dict) -> tuple:
    if not isinstance(item, dict):
        raise FileError(path, "expected an object with " + ", ".join(SPOT_HISTORY_FIELDS), n)
    missing = [f for f in SPOT_HISTORY_FIELDS if f not in item]
    if missing:
        raise FileError(path, f"missing field(s) {', '.join(missing)}", n)
    zone = str(item["AvailabilityZone"])
    region = AWS.region_of_zone(zone)
    if region is None:
        raise FileError(path, f"AvailabilityZone {zone!r}: expected a zone like us-east-1a", n)
    problem = place_problem("aws", region, zone)
    if problem is not None:
        raise FileError(path, f"AvailabilityZone {zone!r}: {problem}", n)
    product = item["ProductDescription"]
    if product not in AWS_PRODUCTS:
        raise FileError(path, f"ProductDescription {product!r}: expected one of "
                        f"{', '.join(AWS_PRODUCTS)}", n)
    price = _positive_price(path, n, "SpotPrice", item["SpotPrice"])
    try:
        at = zoned_time(item["Timestamp"])
    except ValueError as exc:
        raise FileError(path, f"Timestamp {exc}", n) from None
    try:
        spec = catalog.require("aws", str(item["InstanceType"]))
    except InvalidInput as exc:
        raise FileError(path, str(exc), n) from None
    return ("aws", region, zone, spec["instance_type"], "spot", AWS_PRODUCTS[product],
            spec["gpu_model"], int(spec["gpu_count"]), int(spec["vcpus"]),
            float(spec["memory_gb"]), price, at)


def _positive_price(path: Path, row: int, name: str, value: object) -> float:
    text = str(value).strip().lstrip("$")
    try:
        price = float(text)
    except ValueError:
        raise FileError(path, f"{name} {value!r}: expected a positive number (USD/hour)",
                        row) from None
    if not 0 < price < float("inf"):
        raise FileError(path, f"{name} {value!r}: expected a positive number (USD/hour)", row)
    return price


# --- Azure daily logs ------------------------------------------------------------------


def azure_region(stem: str) -> str:
    """ARM region name of a recorded file's stem: us_east -> eastus, eu_west -> westeurope."""
    parts = stem.lower().split("_")
    if len(parts) == 1 and AZURE.region_pattern.fullmatch(parts[0]):
        return parts[0]  # already an ARM name such as eastus2 (checked as a place later)
    digits = parts.pop() if parts and parts[-1].isdigit() else ""
    geo = _AZURE_GEOS.get(parts[0]) if parts else None
    directions = parts[1:]
    if geo is None or not directions or not set(directions) <= _AZURE_DIRECTIONS:
        raise InvalidInput(
            f"file name {stem!r}: expected an Azure region such as us_east, us_south_central "
            "or an ARM region name such as eastus"
        )
    return "".join(directions) + geo + digits


def azure_sku(column: str) -> str:
    """ARM SKU name of a recorded column: 'NC6s v3' -> 'Standard_NC6s_v3'."""
    return "Standard_" + "_".join(column.split())


def _azure_mappings(files: list[Path], result: ParsedFiles) -> dict[Path, dict]:
    """The Azure instance mapping files among `files`, parsed (errors go to `result`)."""
    mappings: dict[Path, dict] = {}
    for path in files:
        try:
            if path.suffix != ".csv" or _csv_header(path) != AZURE_MAPPING_HEADER:
                continue
        except (OSError, UnicodeDecodeError):
            continue  # reported when the file itself is read
        try:
            table = pd.read_csv(path, encoding="utf-8-sig")
            mapping = {}
            for n, row in enumerate(table.itertuples(index=False), start=2):
                gpu = catalog.gpu_model_name(str(row[1]))
                count = int(row[2])
                if count < 1:
                    raise FileError(path, f"# GPUs {row[2]!r}: expected a whole number >= 1", n)
                mapping[azure_sku(str(row[0]))] = (gpu, count)
        except (InvalidInput, ValueError) as exc:
            result.errors.append(str(exc) if isinstance(exc, FileError)
                                 else f"{path}: {_one_line(exc)}")
            mappings[path] = {}
        else:
            mappings[path] = mapping
    return mappings


def read_azure_daily_csv(
    path: Path, mapping: dict[str, tuple[str, int]] | None = None
) -> pd.DataFrame:
    try:
        region = azure_region(path.stem)
    except InvalidInput as exc:
        raise FileError(path, str(exc)) from None
    problem = place_problem("azure", region)
    if problem is not None:
        raise FileError(path, f"file name {path.stem!r}: {problem}")
    table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    specs = {column: _azure_spec(path, column, mapping or {}) for column in table.columns[1:]}
    rows, lines, fields = [], [], []
    for n, record in enumerate(table.itertuples(index=False), start=2):
        try:  # this format's documented date layout, and only here
            day = in_range(pd.to_datetime(record[0], format="%m/%d/%Y", utc=True))
        except (ValueError, TypeError):
            raise FileError(path, f"Date {record[0]!r}: expected m/d/Y such as 2/24/2020, "
                            "from 2000 to 2100", n) from None
        for column, value in zip(table.columns[1:], record[1:], strict=False):
            if not value.strip():
                continue  # not offered in this region that day
            price = _positive_price(path, n, column, value)
            sku, gpu, count, vcpus, memory = specs[column]
            rows.append(("azure", region, "", sku, "spot", "linux", gpu, count, vcpus, memory,
                         price, day))
            lines.append(n)
            fields.append(column)
    return rows_frame(rows, f"import:{path.name}").assign(**{_ROW: lines, _PRICE: fields})


def _azure_spec(path: Path, column: str, mapping: dict) -> tuple[str, str, int, int, float]:
    sku = azure_sku(column)
    spec = catalog.lookup("azure", sku)
    if spec is not None:
        return sku, spec["gpu_model"], int(spec["gpu_count"]), int(spec["vcpus"]), float(
            spec["memory_gb"])
    if sku in mapping:
        gpu, count = mapping[sku]
        return sku, gpu, count, 0, 0.0
    raise FileError(path, f"column {column!r}: unknown Azure VM size {sku!r}: expected a "
                    "GPU size of the catalog or one listed in an instance_mapping.csv beside it")


# --- the store's own export format -----------------------------------------------------


def validate_export(path: Path, frame: pd.DataFrame) -> pd.DataFrame:
    """An export file's frame with the store's types, when every row meets the shared
    rules (`price_collectors.base.problems`); FileError naming the first bad row."""
    missing = [c for c in OBSERVATION_COLUMNS if c not in frame.columns]
    if missing:
        raise FileError(path, f"missing column(s) {', '.join(missing)}: expected "
                        f"{','.join(OBSERVATION_COLUMNS)}")
    frame = frame[OBSERVATION_COLUMNS].reset_index(drop=True)
    frame["zone"] = frame["zone"].fillna("")
    # A market as users read and type it ('on-demand') is the stored one ('on_demand').
    frame["market"] = [canonical(m, ALL_MARKETS) or m if isinstance(m, str) else m
                       for m in frame["market"]]
    rows = [_data_row(path, i) for i in range(len(frame))]
    frame = _checked(path, frame.assign(**{_ROW: rows, _PRICE: "usd_per_hour"}))
    _known_types(path, frame, rows)
    frame["usd_per_hour"] = pd.to_numeric(frame["usd_per_hour"]).astype(float)
    frame["effective_at"] = zoned_times(frame["effective_at"])[0]
    for name in ("gpu_count", "vcpus"):
        frame[name] = pd.to_numeric(frame[name]).astype(int)
    frame["memory_gb"] = pd.to_numeric(frame["memory_gb"]).astype(float)
    frame["source"] = frame["source"].astype(str)
    return frame


def _known_types(path: Path, frame: pd.DataFrame, rows: list[int]) -> None:
    """Every row's instance type is one the catalog knows (bundled, or found by `catalog
    refresh`): a misspelt type would else be stored as an offering no cloud sells."""
    for i, (cloud, name) in enumerate(zip(frame["cloud"], frame["instance_type"],
                                          strict=True)):
        if catalog.lookup(cloud, name) is None:
            known = catalog.types_of(cloud)
            raise FileError(path, f"instance_type {name!r}: not a {cloud} instance type of "
                            f"the catalog (`costsched catalog --cloud {cloud}` lists them; "
                            f"`costsched catalog refresh --cloud {cloud}` adds the types "
                            f"{cloud} sells now){did_you_mean(name, known)}", rows[i])


def _data_row(path: Path, index: int) -> int:
    """The file row of a data row: CSV rows count the header line, Parquet rows from 1."""
    return index + 2 if path.suffix == ".csv" else index + 1


def write_export(frame: pd.DataFrame, path: Path) -> None:
    """Write an observation frame in the export format (.csv or .parquet by suffix), whole
    or not at all: through a temporary file beside `path`, renamed when complete."""
    if path.suffix not in (".parquet", ".csv"):
        raise InvalidInput(f"{path}: unknown export format: expected a .csv or .parquet path")
    out = frame.copy()
    if path.suffix == ".csv":
        out["effective_at"] = out["effective_at"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:  # created as open() would (mode from the umask), so the result is too
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        if path.suffix == ".parquet":
            out.to_parquet(partial, index=False)
        else:
            out.to_csv(partial, index=False)
        os.replace(partial, path)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)
