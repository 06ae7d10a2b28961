"""Cumulative exports: per billing period, only the newest delivery's files are read, and
what an older delivery stored is dropped when a newer one is imported."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from costsched.bills.deliveries import Listed, period_folder, select, widen
from costsched.model import InvalidInput

T = datetime(2024, 6, 2, 6, 0, tzinfo=timezone.utc)
D = timedelta(days=1)
P = "daily/costsched/20240601-20240630/"


def _never(name: str) -> bytes:
    raise AssertionError(f"{name} read")


def test_period_folders_of_the_documented_layouts() -> None:
    assert period_folder(P + "run-1/part_0_0001.csv") == P
    assert period_folder(P + "costsched_0a1b2c3d-0000-4000-8000-00000000000a.csv") == P
    assert period_folder("cur/r/20240601-20240701/asm/r-1.csv.gz") == "cur/r/20240601-20240701/"
    assert period_folder("e/x/data/BILLING_PERIOD=2024-06/x-00001.csv.gz") == \
        "e/x/data/BILLING_PERIOD=2024-06/"
    assert period_folder("e/x/data/x-00001.csv.gz") is None
    assert period_folder("e/20240601-20240630") is None  # a file named so: no folder
    assert widen(P + "run-2/") == P and widen("daily/costsched/") == "daily/costsched/"


def test_the_newest_run_folder_counts_and_an_unfinished_one_waits() -> None:
    listed = [Listed(P + f"run-{k}/part_{n}_0001.csv", T + k * D) for k in (1, 2, 3)
              for n in (0, 1)]
    listed += [Listed(P + f"run-{k}/manifest.json", T + k * D) for k in (1, 2)]
    chosen = select(listed, "daily/", _never)
    # run-3 has no manifest yet: it is still being written; run-2 is the newest finished.
    assert chosen.read == [P + "run-2/part_0_0001.csv", P + "run-2/part_1_0001.csv"]
    assert chosen.skipped == sorted(n.name for n in listed if "part" in n.name
                                    and "run-2" not in n.name)
    assert chosen.current == {P: frozenset(chosen.read)}
    # Without manifests, the newest folder counts.
    bare = [o for o in listed if "manifest" not in o.name]
    assert select(bare, "daily/", _never).read == [P + "run-3/part_0_0001.csv",
                                                   P + "run-3/part_1_0001.csv"]


def test_files_directly_in_the_period_folder() -> None:
    guid = "costsched_0a1b2c3d-0000-4000-8000-00000000000{}.csv"
    older = [Listed(P + guid.format(k), T + k * timedelta(minutes=10)) for k in (1, 2)]
    # The older one-file-per-run exports: each file is a run, even 10 minutes apart.
    assert select(older, "", _never).read == [P + guid.format(2)]
    # Other files: grouped by Last-Modified, a gap over an hour starting another delivery.
    parts = [Listed(P + "part_0.csv", T), Listed(P + "part_1.csv", T + timedelta(minutes=40)),
             Listed(P + "part_2.csv", T - 2 * D)]  # a part the last delivery did not rewrite
    assert select(parts, "", _never).read == [P + "part_0.csv", P + "part_1.csv"]
    # Overwritten in place (one delivery): every file, times known or not.
    same = [Listed(P + "part_0.csv", T), Listed(P + "part_1.csv", T + timedelta(minutes=5))]
    assert select(same, "", _never).read == [P + "part_0.csv", P + "part_1.csv"]
    untimed = [Listed(o.name) for o in same]
    assert select(untimed, "", _never).read == [P + "part_0.csv", P + "part_1.csv"]
    assert select(untimed, "", _never).current == {P: frozenset(o.name for o in untimed)}
    # Several deliveries whose times are unknown: undecidable, every file as before.
    runs = [Listed(P + "run-1/a.csv"), Listed(P + "run-2/a.csv")]
    unknown = select(runs, "", _never)
    assert unknown.read == [P + "run-1/a.csv", P + "run-2/a.csv"]
    assert unknown.skipped == [] and unknown.current == {}


def test_a_manifest_decides_without_times() -> None:
    data = "e/x/data/BILLING_PERIOD=2024-06/"
    listed = [Listed(data + "d1/x-00001.csv.gz"), Listed(data + "d2/x-00001.csv.gz"),
              Listed(data + "d2/x-00002.csv.gz"),
              Listed("e/x/metadata/BILLING_PERIOD=2024-06/x-Manifest.json"),
              Listed("e/x/data/BILLING_PERIOD=2024-05/x-00001.csv.gz"),
              Listed("e/x/other/y.csv")]
    manifest = {"executionId": "d2", "dataFiles": [
        f"s3://b/{data}d2/x-00001.csv.gz", f"s3://b/{data}d2/x-00002.csv.gz"]}
    chosen = select(listed, "e/", lambda name: json.dumps(manifest).encode())
    assert chosen.read == ["e/x/data/BILLING_PERIOD=2024-05/x-00001.csv.gz",
                           data + "d2/x-00001.csv.gz", data + "d2/x-00002.csv.gz",
                           "e/x/other/y.csv"]  # outside any period folder: read as before
    assert chosen.skipped == [data + "d1/x-00001.csv.gz"]
    # A file named twice (as a URI and as a key) is still one listed file.
    twice = {"dataFiles": [*manifest["dataFiles"], data + "d2/x-00001.csv.gz"]}
    assert select(listed, "e/", lambda name: json.dumps(twice).encode()).read == chosen.read
    # A manifest naming a file that is not listed is not the listing's: times decide.
    manifest["dataFiles"].append(f"s3://b/{data}d3/x-00001.csv.gz")
    assert select(listed, "e/", lambda name: json.dumps(manifest).encode()).skipped == []
    # Nor is a manifest that is not JSON, or that cannot be read.
    assert select(listed, "e/", lambda name: b"<xml/>").skipped == []

    def refused(name: str) -> bytes:
        raise InvalidInput(f"s3://b/{name}: cannot read it (AccessDenied)")

    assert select(listed, "e/", refused).skipped == []


def test_a_location_inside_a_period_reads_only_the_newest_of_it() -> None:
    listed = [Listed(P + f"run-{k}/part_0_0001.csv", T + k * D) for k in (1, 2)]
    older = select(listed, P + "run-1/", _never)
    assert older.read == [] and older.skipped == [P + "run-1/part_0_0001.csv"]
    newer = select(listed, P + "run-2/", _never)
    assert newer.read == [P + "run-2/part_0_0001.csv"] and newer.skipped == []
    assert newer.current == {P: frozenset({P + "run-2/part_0_0001.csv"})}


@pytest.mark.parametrize("reorder", [False, True])
def test_ties_keep_both_deliveries(reorder: bool) -> None:
    listed = [Listed(P + "run-1/a.csv", T), Listed(P + "run-2/a.csv", T)]
    chosen = select(list(reversed(listed)) if reorder else listed, "", _never)
    assert chosen.read == [P + "run-1/a.csv", P + "run-2/a.csv"] and chosen.skipped == []


def test_run_folders_named_by_their_time_are_ordered_by_name() -> None:
    listed = [Listed(P + "202406021527/0a1b/part_0_0001.snappy.parquet"),
              Listed(P + "202406030944/9f8e/part_0_0001.snappy.parquet"),
              Listed(P + "202406030944/9f8e/part_1_0001.snappy.parquet")]
    chosen = select(listed, "", _never)
    assert chosen.read == [o.name for o in listed[1:]]
    assert chosen.skipped == [listed[0].name]
    other = [Listed(P + "202406021527/a.csv"), Listed(P + "run-x/a.csv")]
    assert select(other, "", _never).skipped == []  # not all named by time: undecided
