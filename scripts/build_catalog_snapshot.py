"""Rebuild the bundled catalog's snapshot rows from published price tables.

Maintainers run this after refreshing the source tables in scripts/snapshot_sources/
(each a verbatim excerpt, in the publisher's own columns, of a published file; SOURCES
names the file, the commit it was read at, and the month its prices held for):

    python scripts/build_catalog_snapshot.py          # rewrite costsched/data/*.csv
    python scripts/build_catalog_snapshot.py --check  # exit 1 if the data is out of date

Per (cloud, instance type, region) it records the on-demand list price and, where the
table has spot prices, the median over the region's availability zones (Local Zones such
as use1-atl2-az1 left out). Rows it wrote before (same source text) are replaced; every
other row of the data files is kept. Instance types it has not seen are added to
instance_types.csv (GPU memory from GPU_MEMORY_GB; gpu_count 0 for CPU types).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
SOURCES_DIR = ROOT / "scripts" / "snapshot_sources"
DATA = ROOT / "costsched" / "data"


@dataclass(frozen=True)
class Source:
    file: str
    cloud: str
    as_of: str  # YYYY-MM: the month the prices are known to have held for
    text: str
    # GCP machine types whose GPUs the table prices on rows of their own (InstanceType
    # empty): the file of those rows, and each machine type's (GPU model, count). The
    # machine's price is its row's plus its GPUs' row in the same zone, as GCP bills it.
    accelerators: str = ""
    attached: tuple[tuple[str, str, int], ...] = ()


SOURCES = (
    Source("aws_vantage_tsaol.csv", "aws", "2026-08",
           "instances.vantage.sh via tsaol/aws-gpu data/p5_family_all.js (commit 18aebd1, "
           "'Last updated: 2026-08-26')"),
    Source("aws_vantage_tsaol_p6.csv", "aws", "2026-08",
           "instances.vantage.sh via tsaol/aws-gpu data/p6-b200_instances.js (commit 299375b, "
           "'Last updated: 2026-08-26')"),
    Source("aws_vantage_tsaol_g5.csv", "aws", "2026-08",
           "instances.vantage.sh via tsaol/aws-gpu data/g5_instances.js (commit 18aebd1, "
           "'Last updated: 2026-08-26')"),
    Source("aws_vantage_tsaol_g6.csv", "aws", "2026-08",
           "instances.vantage.sh via tsaol/aws-gpu data/g6_instances.js (commit 299375b, "
           "'Last updated: 2026-08-26')"),
    Source("aws_vantage_tsaol_p4de.csv", "aws", "2026-08",
           "instances.vantage.sh via tsaol/aws-gpu data/p4de_instances.js (commit 299375b, "
           "'Last updated: 2026-08-26')"),
    # The SkyPilot catalog copies carry no date of their own; they are dated by the month
    # their schema version was first published (v8: files added 2025-10, skypilot-catalog
    # PR #154), the earliest month they can hold for: an older date, never a newer one.
    Source("aws_v8_00148f2.csv", "aws", "2025-10",
           "skypilot-catalog v8 aws/vms.csv (commit 00148f2; undated copy, dated by its "
           "schema's first month)"),
    Source("gcp_v8_006059e.csv", "gcp", "2025-10",
           "skypilot-catalog v8 gcp/vms.csv (commit 006059e; undated copy, dated by its "
           "schema's first month; A3 types: machine row + its GPUs' row)",
           accelerators="gcp_v8_006059e_accelerators.csv",
           attached=(("a3-highgpu-4g", "H100", 4), ("a3-highgpu-8g", "H100", 8),
                     ("a3-megagpu-8g", "H100-MEGA", 8), ("a3-ultragpu-8g", "H200", 8))),
    # v6 was published after 2023-06, when v5 was the latest schema (PR #33).
    Source("azure_v6_098741e.csv", "azure", "2023-07",
           "skypilot-catalog v6 azure/vms.csv (commit 098741e; undated copy, dated by the "
           "month after v5 was the latest schema)"),
)
# GPU memory per card (GB) of the models these tables name.
GPU_MEMORY_GB = {"H100": 80, "H100-MEGA": 80, "H200": 141, "B200": 179, "L40S": 48, "L4": 24,
                 "A10G": 24, "A100": 40, "A100-80GB": 80, "MI300X": 192, "T4": 16, "V100": 16}
_LOCAL_ZONE = re.compile(r"^[a-z0-9]+-[a-z]+\d+-az\d+$")  # use1-atl2-az1


def source_rows(source: Source) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(instance types, on-demand rows, spot rows) of one source table."""
    table = pd.read_csv(SOURCES_DIR / source.file)
    if source.attached:
        table = _with_attached_gpus(table, source)
    if "AvailabilityZone" in table:
        table = table[~table["AvailabilityZone"].fillna("").str.match(_LOCAL_ZONE)]
    gpu = table.get("AcceleratorName", pd.Series("", index=table.index))
    gpu = gpu.astype(object).where(gpu.notna(), "")
    count = table.get("AcceleratorCount", pd.Series(0, index=table.index)).fillna(0)
    types = pd.DataFrame({
        "cloud": source.cloud, "instance_type": table["InstanceType"],
        "gpu_model": gpu, "gpu_count": count.astype(int),
        "gpu_memory_gb": [GPU_MEMORY_GB.get(g, 0) if g else 0 for g in gpu],
        "vcpus": table["vCPUs"].astype(int),
        "memory_gb": [f"{m:g}" for m in table["MemoryGiB"].astype(float)],
    }).drop_duplicates("instance_type")
    keys = ["InstanceType", "Region"]
    on_demand = (table.groupby(keys)["Price"].max().reset_index()
                 .rename(columns={"InstanceType": "instance_type", "Region": "region",
                                  "Price": "usd_per_hour"}))
    on_demand = on_demand.assign(cloud=source.cloud, as_of=source.as_of, source=source.text)
    spot = pd.DataFrame()
    if "SpotPrice" in table:
        priced = table.dropna(subset=["SpotPrice"])
        spot = priced.groupby(keys)["SpotPrice"].agg(["median", "size"]).reset_index()
        spot = pd.DataFrame({
            "cloud": source.cloud, "region": spot["Region"], "zone": "",
            "instance_type": spot["InstanceType"], "usd_per_hour": spot["median"].round(6),
            "as_of": source.as_of,
            "source": [f"{source.text}: median SpotPrice of its {n} zones in the region"
                       if n > 1 else f"{source.text}: SpotPrice" for n in spot["size"]]})
    return types, on_demand, spot


def _with_attached_gpus(table: pd.DataFrame, source: Source) -> pd.DataFrame:
    """The table with each attached-GPU machine type's GPU model, count and the price of
    its GPUs (same zone) added to its own; a machine type without such a row is dropped."""
    gpus = pd.read_csv(SOURCES_DIR / source.accelerators)
    parts = {name: (model, count) for name, model, count in source.attached}
    rows = []
    for row in table.to_dict("records"):
        if row["InstanceType"] not in parts:
            rows.append(row)
            continue
        model, count = parts[row["InstanceType"]]
        match = gpus[(gpus["AcceleratorName"] == model) & (gpus["AcceleratorCount"] == count)
                     & (gpus["AvailabilityZone"] == row["AvailabilityZone"])]
        if match.empty:
            continue
        gpu = match.iloc[0]
        rows.append({**row, "AcceleratorName": model, "AcceleratorCount": count,
                     "Price": round(row["Price"] + gpu["Price"], 5),
                     "SpotPrice": round(row["SpotPrice"] + gpu["SpotPrice"], 5)})
    return pd.DataFrame(rows, columns=table.columns)


def rebuild() -> dict[str, pd.DataFrame]:
    """The data files as they should be."""
    types = pd.read_csv(DATA / "instance_types.csv", dtype=str, keep_default_na=False)
    listed = pd.read_csv(DATA / "on_demand_prices.csv", dtype=str, keep_default_na=False)
    spots = pd.read_csv(DATA / "spot_prices.csv", dtype=str, keep_default_na=False)
    texts = {s.text for s in SOURCES}
    listed = listed[~listed["source"].isin(texts)]
    spots = spots[~spots["source"].str.split(": median| SpotPrice", regex=True).str[0]
                  .str.rstrip(":").isin(texts)]
    for source in SOURCES:
        new_types, on_demand, spot = source_rows(source)
        known = set(zip(types["cloud"], types["instance_type"], strict=True))
        fresh = new_types[[(c, t) not in known for c, t in
                           zip(new_types["cloud"], new_types["instance_type"], strict=True)]]
        types = pd.concat([types, fresh.astype(str)], ignore_index=True)
        listed = pd.concat([listed, on_demand[listed.columns].astype(str)], ignore_index=True)
        if not spot.empty:
            spots = pd.concat([spots, spot[spots.columns].astype(str)], ignore_index=True)
    return {"instance_types.csv": types, "on_demand_prices.csv": listed,
            "spot_prices.csv": spots}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="Exit 1 (naming the files) if the data files are out of date.")
    args = parser.parse_args(argv)
    stale = []
    for name, frame in rebuild().items():
        path = DATA / name
        old = path.read_bytes()
        ending = "\r\n" if b"\r\n" in old[:4096] else "\n"  # keep the file's own
        text = frame.to_csv(index=False, lineterminator=ending)
        if old.decode() != text:
            stale.append(name)
            if not args.check:
                path.write_bytes(text.encode())
    if args.check and stale:
        print(f"out of date: {', '.join(stale)} (run scripts/build_catalog_snapshot.py)")
        return 1
    print(("rewrote " + ", ".join(stale)) if stale and not args.check else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
