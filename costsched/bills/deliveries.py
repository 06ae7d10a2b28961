"""Which files of an export count: per billing period, the newest delivery only.

Several exports are delivered cumulatively: each run writes the billing period so far
again, beside the runs before it. The layouts this relies on:

- Azure Cost Management exports: `<directory>/<export>/<YYYYMMDD-YYYYMMDD>/<run id>/`
  holding `part_N_NNNN.csv` files and a `manifest.json` (one folder per run); older
  exports write one `<export>_<guid>.csv` per run directly in the date-range folder.
- Legacy AWS Cost and Usage Reports ("create new report version"):
  `<prefix>/<report>/<yyyymmdd-yyyymmdd>/<assembly id>/<report>-N.csv.gz` per update, and
  a `<report>-Manifest.json` in the date-range folder naming the current update's files.
- AWS Data Exports (CUR 2.0): `<prefix>/<export>/data/BILLING_PERIOD=YYYY-MM/...`, and
  `<prefix>/<export>/metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json` naming the
  files of the current delivery (AWS recommends reading it to know what to ingest).

A file's billing period is its innermost folder named like a date range
(`20240601-20240630`) or `BILLING_PERIOD=2024-06`. Within a period's folder, the
delivery is chosen by the first rule that decides:

1. a manifest in the period's folder (or, for `data/BILLING_PERIOD=...`, in the sibling
   `metadata/BILLING_PERIOD=...`, read there by its documented name when the location
   listed was the `data/` folder) that names listed data files of the period, and only
   listed ones: exactly the files it names (the newest manifest, by Last-Modified; one
   that cannot be read or is not JSON is not used);
2. else deliveries by place: each sub-folder of the period's folder is one delivery (a run,
   an assembly), each `<name>_<guid>.csv` file one, and the other files directly in the
   folder are grouped by their Last-Modified times (a gap of more than an hour starts
   another delivery). When any sub-folder holds a manifest, the sub-folders without one
   are deliveries still being written and are left out. The delivery whose newest file was
   modified last counts; when a time is unknown, run folders named by their time
   (`202406021527/<run id>/...`, as Azure writes some) are ordered by name, and otherwise,
   with more than one delivery, every file is read, as without this rule.

An export that overwrites its files keeps its one delivery. Files outside any period's
folder are all read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import pandas as pd

from costsched.bills import files
from costsched.model import InvalidInput

_PERIOD = re.compile(r"^(?:\d{8}-\d{8}|BILLING_PERIOD=\d{4}-\d{2})$", re.IGNORECASE)
_RUN_FILE = re.compile(r"^.+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
                       r"\.csv(?:\.gz)?$", re.IGNORECASE)
_DATA_PERIOD = re.compile(r"^(?P<head>(?:.*/)?)data/(?P<period>BILLING_PERIOD=[^/]+/)$",
                          re.IGNORECASE)
_STAMP = re.compile(r"^\d{12,14}$")  # a run folder named by its time, 202406021527
GAP = timedelta(hours=1)  # files written further apart than this are different deliveries


@dataclass(frozen=True)
class Listed:
    """An object of an export's listing: its name (key, blob name) and when it was last
    modified (None: not given)."""

    name: str
    modified: datetime | None = None


@dataclass(frozen=True)
class Selection:
    """What to read of a listing. read: the data files to read; skipped: those of older
    deliveries of their period (or of one still being written), not read; current: per
    period folder whose newest delivery is known, the names of that delivery's files."""

    read: list[str]
    skipped: list[str]
    current: dict[str, frozenset[str]] = field(default_factory=dict)


def period_folder(name: str) -> str | None:
    """The folder (ending in '/') of the billing period `name` lies in, or None."""
    parts = name.split("/")
    for i in range(len(parts) - 2, -1, -1):  # the innermost folder named like a period
        if _PERIOD.match(parts[i]):
            return "/".join(parts[:i + 1]) + "/"
    return None


def widen(prefix: str) -> str:
    """The prefix to list for a location `prefix`: a location inside a period's folder (a
    run's folder, one file) is listed from that period's folder, to see its deliveries."""
    return period_folder(prefix) or prefix


def is_manifest(name: str) -> bool:
    return name.rsplit("/", 1)[-1].lower().endswith("manifest.json")


def select(listed: Iterable[Listed], within: str, fetch: Callable[[str], bytes]
           ) -> Selection:
    """Choose the files to read of `listed` (the objects under a listed prefix), keeping
    those under `within` (the location asked for). `fetch(name)`: a manifest's bytes."""
    listed = list(listed)
    manifests = {o.name: o for o in listed if is_manifest(o.name)}
    periods: dict[str, list[Listed]] = {}
    read: list[str] = []
    for item in listed:
        if not files.is_export_file(item.name):
            continue
        folder = period_folder(item.name)
        if folder is None:
            read.append(item.name)
        else:
            periods.setdefault(folder, []).append(item)
    skipped: list[str] = []
    current: dict[str, frozenset[str]] = {}
    for folder, items in periods.items():
        chosen = _by_manifest(folder, items, _manifests_of(folder, manifests, widen(within)),
                              fetch)
        if chosen is None:
            chosen = _by_place(folder, items, manifests)
        if chosen is None:  # not decidable: every file, as without deliveries
            read += [o.name for o in items]
            continue
        current[folder] = chosen
        read += [o.name for o in items if o.name in chosen]
        skipped += [o.name for o in items if o.name not in chosen]
    return Selection(read=sorted(n for n in read if n.startswith(within)),
                     skipped=sorted(n for n in skipped if n.startswith(within)),
                     current=current)


def _manifests_of(folder: str, manifests: dict[str, Listed], listed: str
                  ) -> dict[str, Listed]:
    """The manifests that may name a period folder's current files: those listed in the
    folder or, for CUR 2.0's `data/BILLING_PERIOD=...`, in its `metadata/` sibling; when
    that sibling was not listed (the location was `data/`), the one AWS names
    `<export>-Manifest.json` there, if it can be read."""
    places = {folder}
    sibling = _DATA_PERIOD.match(folder)
    metadata = f"{sibling['head']}metadata/{sibling['period']}" if sibling else None
    if metadata:
        places.add(metadata)
    found = {n: o for n, o in manifests.items() if n.rsplit("/", 1)[0] + "/" in places}
    if not found and sibling and metadata and not metadata.startswith(listed):
        export = sibling["head"].rstrip("/").rsplit("/", 1)[-1]
        if export:
            name = f"{metadata}{export}-Manifest.json"
            found[name] = Listed(name)
    return found


def _by_manifest(folder: str, items: list[Listed], manifests: dict[str, Listed],
                 fetch: Callable[[str], bytes]) -> frozenset[str] | None:
    names = {o.name for o in items}
    found: list[tuple[datetime | None, frozenset[str]]] = []
    for name, item in sorted(manifests.items()):
        try:
            refs = _references(fetch(name))
        except InvalidInput:  # not readable (no right to metadata/): the other rules decide
            continue
        named = {_listed_as(r, names) for r in refs if folder in r}
        if named and None not in named:  # names listed files only: it is current
            found.append((item.modified, frozenset(n for n in named if n is not None)))
    if not found:
        return None
    if len({s for _, s in found}) == 1:
        return found[0][1]
    if any(t is None for t, _ in found):
        return None
    newest = max(t for t, _ in found)
    chosen = {s for t, s in found if t == newest}
    return chosen.pop() if len(chosen) == 1 else None


def _listed_as(ref: str, names: set[str]) -> str | None:
    """The listed name a manifest's reference is (the reference itself, or a path ending
    in it: a container's or bucket's name before it), or None."""
    parts = ref.split("/")
    for i in range(len(parts)):
        candidate = "/".join(parts[i:])
        if candidate in names:
            return candidate
    return None


def _references(data: bytes) -> set[str]:
    """The data files a manifest names, as keys or paths (a URL's scheme and host left
    out), whatever its field names (CUR 2.0, legacy CUR and Azure name them differently)."""
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError):
        return set()
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, str):
            if files.is_export_file(value):
                found.add(urlsplit(value).path.lstrip("/") if "://" in value
                          else value.lstrip("/"))
        elif isinstance(value, dict):
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(document)
    return found


def _by_place(folder: str, items: list[Listed], manifests: dict[str, Listed]
              ) -> frozenset[str] | None:
    groups: dict[str, list[Listed]] = {}
    loose: list[Listed] = []
    for item in items:
        rest = item.name[len(folder):]
        if "/" in rest:
            groups.setdefault("folder:" + rest.split("/", 1)[0], []).append(item)
        elif _RUN_FILE.match(rest):
            groups["file:" + rest] = [item]
        else:
            loose.append(item)
    for n, cluster in enumerate(_clusters(loose)):
        groups[f"loose:{n}"] = cluster
    finished = {"folder:" + m[len(folder):].split("/", 1)[0] for m in manifests
                if m.startswith(folder) and "/" in m[len(folder):]}
    if finished:  # a run's manifest is written last: a folder without one is unfinished
        groups = {k: v for k, v in groups.items()
                  if not k.startswith("folder:") or k in finished}
    if not groups:
        return None
    if len(groups) == 1:
        return frozenset(o.name for o in next(iter(groups.values())))
    last = {k: _newest(group) for k, group in groups.items()}
    if any(t is None for t in last.values()):
        stamps = {k: k.removeprefix("folder:") for k in groups}
        if not all(k.startswith("folder:") and _STAMP.match(v) for k, v in stamps.items()) \
                or len({len(v) for v in stamps.values()}) != 1:
            return None
        newest_name = max(stamps.values())  # run folders named by their time: by name
        return frozenset(o.name for o in groups[f"folder:{newest_name}"])
    newest = max(t for t in last.values() if t is not None)
    return frozenset(o.name for k, group in groups.items() if last[k] == newest
                     for o in group)


def _newest(group: list[Listed]) -> datetime | None:
    """When a group's newest file was modified; None when a time is unknown."""
    times = [o.modified for o in group]
    return None if any(t is None for t in times) else max(t for t in times if t is not None)


def _clusters(items: list[Listed]) -> Iterator[list[Listed]]:
    """Files grouped by their Last-Modified times: a gap of more than GAP starts a group.
    Files whose time is unknown are one group."""
    timed = [(o.modified, o) for o in items if o.modified is not None]
    if len(timed) < len(items):
        if items:
            yield items
        return
    timed.sort(key=lambda pair: pair[0])
    group: list[Listed] = []
    previous: datetime | None = None
    for at, item in timed:
        if previous is not None and at - previous > GAP:
            yield group
            group = []
        group.append(item)
        previous = at
    if group:
        yield group


@dataclass(frozen=True)
class Scan:
    """An export's listing and the files chosen from it. A name's source (how its lines
    are stored) is `base` + the name; `fetch` reads a name's bytes; `lines_of` turns a
    file's rows into bill lines."""

    base: str
    selection: Selection
    fetch: Callable[[str], bytes]
    lines_of: Callable[[pd.DataFrame, str], pd.DataFrame]

    def lines(self) -> Iterator[tuple[str, pd.DataFrame]]:
        """(source, its bill lines) for each file to read, in name order."""
        for name in self.selection.read:
            where = self.base + name
            yield where, self.lines_of(files.read_table(self.fetch(name), where), where)

    @property
    def skipped(self) -> list[str]:
        """The sources of the files of older deliveries, not read."""
        return [self.base + n for n in self.selection.skipped]

    @property
    def current(self) -> dict[str, frozenset[str]]:
        """Per period folder (as a source prefix): the sources of its newest delivery."""
        return {self.base + folder: frozenset(self.base + n for n in names)
                for folder, names in self.selection.current.items()}
