"""Rebuild the bundled catalog's snapshot rows from published, dated price tables.

Three kinds of source, all kept in scripts/snapshot_sources/:

- SOURCES: verbatim excerpts, in the publisher's own columns, of a published file, each
  named with the commit it was read at and the month its prices held for;
- N1_SOURCES: GCP's N1 machine types and the GPUs it attaches to them, excerpted apart
  from such a file, paired by GCP's limits (costsched/data/gcp_n1_gpu_limits.csv) and
  priced as machine + GPUs;
- HISTORIES: a public file that its repository rewrites about weekly (GCP's prices in
  Cyclenerd/google-cloud-pricing-cost-calculator's pricing.yml), read at every commit since
  a day: one row per machine type, region and commit, dated by the commit's day and naming
  the commit. They become price history: one dated on-demand and spot row each.

    python scripts/build_catalog_snapshot.py --fetch  # read the histories again (network:
                                                      # git), then rewrite the data files
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
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from costsched.clouds.gcp import GCP
from costsched.n1_gpu_limits import LIMITS_FILE, read_limits

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
    # The A10 types with whole GPUs (NVadsA10 v5 also sells 1/6, 1/3 and 1/2 of one, which
    # a GPU count cannot say), from a fork's copy of the v8 file.
    Source("azure_v8_20291d7_a10.csv", "azure", "2025-10",
           "skypilot-catalog v8 azure/vms.csv (copy in coopslarhette/skypilot-catalog, commit "
           "20291d7; undated copy, dated by its schema's first month)"),
)


@dataclass(frozen=True)
class N1Source:
    """GCP's N1 machine types with the GPUs it attaches to them: each machine type of
    `machines` (rows of their own, no GPUs) with each GPU count of `accelerators` (the
    GPUs' rows, InstanceType empty) that GCP's limits (costsched/data/gcp_n1_gpu_limits.csv)
    let it take, named MACHINE+NxACCELERATOR and priced per region as the machine's row
    plus its GPUs' row, as GCP bills it; spot only where both have a spot price."""

    machines: str
    accelerators: str
    as_of: str
    text: str


# The excerpts keep one zone's row per region and the regions the catalog prices GCP in
# (us-central1, us-east1, us-east4, us-west1, europe-west4, asia-east1): GCP prices N1
# machines and their GPUs per region, the same in each of its zones.
N1_SOURCES = (
    N1Source("gcp_v8_006059e_n1.csv", "gcp_v8_006059e_accelerators.csv", "2025-10",
             "skypilot-catalog v8 gcp/vms.csv (commit 006059e; undated copy, dated by its "
             "schema's first month; N1 machine row + its GPUs' row)"),
)


@dataclass(frozen=True)
class HistorySource:
    """A price file its repository rewrites over time, read at each commit since `since`."""

    file: str  # the dated rows in snapshot_sources/ (HISTORY_COLUMNS)
    cloud: str
    repo: str  # owner/name on GitHub
    path: str  # the file in the repository
    since: str  # YYYY-MM-DD: the first commit day read
    regions: tuple[str, ...]
    # (machine type, GPU model, GPU count, vCPUs, memory GB): the machine types kept, with
    # their shapes as the file gives them (`cpu`, `ram`, and the GPU key's count).
    types: tuple[tuple[str, str, int, int, float], ...]

    @property
    def prefix(self) -> str:
        """How the source text of every row read from it begins."""
        return f"{self.repo} {self.path} (commit "

    def text(self, commit: str) -> str:
        return f"{self.prefix}{commit[:12]})"


HISTORY_COLUMNS = ["cloud", "instance_type", "region", "zone", "spot_price_usd_per_hour",
                   "ondemand_usd_per_hour", "observed_date", "source_repo", "source_path",
                   "source_commit"]
HISTORIES = (
    # Prices of whole machines (vCPUs, memory and attached GPUs): `hour` and `hour_spot`
    # under compute.instance.<type>.cost.<region>, from Google's billing catalog.
    HistorySource("gcp_pricing_history.csv", "gcp",
                  "Cyclenerd/google-cloud-pricing-cost-calculator", "pricing.yml",
                  "2025-12-01",
                  regions=("us-central1", "us-east1", "us-east4", "us-east5", "us-south1",
                           "us-west1", "us-west4", "europe-west1", "europe-west4",
                           "asia-southeast1"),
                  types=(("a3-highgpu-1g", "H100", 1, 26, 234),
                         ("a3-highgpu-8g", "H100", 8, 208, 1872),
                         ("a3-megagpu-8g", "H100-MEGA", 8, 208, 1872),
                         ("a2-ultragpu-1g", "A100-80GB", 1, 12, 170),
                         ("a2-ultragpu-8g", "A100-80GB", 8, 96, 1360),
                         ("g2-standard-4", "L4", 1, 4, 16))),
)

# GPU memory per card (GB) of the models these tables name.
GPU_MEMORY_GB = {"P4": 8, "P100": 16, "H100": 80, "H100-MEGA": 80, "H200": 141, "B200": 179,
                 "L40S": 48, "L4": 24, "A10": 24, "A10G": 24, "A100": 40, "A100-80GB": 80,
                 "MI300X": 192, "T4": 16, "V100": 16}
_LOCAL_ZONE = re.compile(r"^[a-z0-9]+-[a-z]+\d+-az\d+$")  # use1-atl2-az1


def source_rows(source: Source, sources_dir: Path = SOURCES_DIR
                ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(instance types, on-demand rows, spot rows) of one source table."""
    table = pd.read_csv(sources_dir / source.file)
    if source.attached:
        table = _with_attached_gpus(table, source, sources_dir)
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


def _with_attached_gpus(table: pd.DataFrame, source: Source, sources_dir: Path
                        ) -> pd.DataFrame:
    """The table with each attached-GPU machine type's GPU model, count and the price of
    its GPUs (same zone) added to its own; a machine type without such a row is dropped."""
    gpus = pd.read_csv(sources_dir / source.accelerators)
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


def n1_rows(source: N1Source, sources_dir: Path = SOURCES_DIR, data: Path = DATA,
            priced: frozenset[str] = frozenset()
            ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(instance types, on-demand rows, spot rows) of every N1 machine type and GPU count
    GCP's limits allow, in the regions that price both; a pair named in `priced` (GCP types
    another source prices: the default hosts skypilot-catalog v5 published) keeps that
    source's rows, so a job naming only its GPUs is planned as before."""
    machines = pd.read_csv(sources_dir / source.machines).drop_duplicates(
        ["InstanceType", "Region"])
    gpus = pd.read_csv(sources_dir / source.accelerators).drop_duplicates(
        ["AcceleratorName", "AcceleratorCount", "Region"])
    by_region = {(g["AcceleratorName"], int(g["AcceleratorCount"]), g["Region"]): g
                 for g in gpus.to_dict("records")}
    limits = read_limits(data / LIMITS_FILE)
    types, on_demand, spot = [], [], []
    for machine in machines.to_dict("records"):
        vcpus, memory = int(machine["vCPUs"]), round(float(machine["MemoryGiB"]), 2)
        for (model, count), limit in limits.items():
            gpu = by_region.get((model, count, machine["Region"]))
            if gpu is None or not limit.takes(vcpus, memory):
                continue
            name = f"{machine['InstanceType']}+{count}x{GCP.accelerator(model)}"
            if name in priced:
                continue
            types.append(("gcp", name, model, count, GPU_MEMORY_GB[model], vcpus,
                          f"{memory:g}"))
            place = {"cloud": "gcp", "region": machine["Region"], "instance_type": name,
                     "as_of": source.as_of}
            on_demand.append({**place, "usd_per_hour": round(machine["Price"] + gpu["Price"], 5),
                              "source": source.text})
            if pd.notna(machine["SpotPrice"]) and pd.notna(gpu["SpotPrice"]):
                spot.append({**place, "zone": "", "source": f"{source.text}: SpotPrice",
                             "usd_per_hour": round(machine["SpotPrice"] + gpu["SpotPrice"], 5)})
    types_frame = pd.DataFrame(types, columns=["cloud", "instance_type", "gpu_model",
                                               "gpu_count", "gpu_memory_gb", "vcpus",
                                               "memory_gb"]).drop_duplicates("instance_type")
    return (types_frame.sort_values("instance_type", ignore_index=True),
            pd.DataFrame(on_demand).sort_values(["instance_type", "region"],
                                                ignore_index=True),
            pd.DataFrame(spot).sort_values(["instance_type", "region"], ignore_index=True))


def history_rows(source: HistorySource, sources_dir: Path = SOURCES_DIR
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(instance types, on-demand rows, spot rows) of a history's dated file: one row per
    machine type, region and commit, dated by the commit's day (figures as written)."""
    table = pd.read_csv(sources_dir / source.file, dtype=str, keep_default_na=False)
    shapes = {t[0]: t for t in source.types}
    table = table[table["instance_type"].isin(list(shapes))
                  & table["region"].isin(list(source.regions))]
    table = table.sort_values(["observed_date", "instance_type", "region"], kind="stable")
    text = source.prefix + table["source_commit"].str[:12] + ")"
    out = []
    for column in ("ondemand_usd_per_hour", "spot_price_usd_per_hour"):
        priced = table[column] != ""
        out.append(pd.DataFrame({
            "cloud": source.cloud, "region": table["region"][priced],
            "zone": table["zone"][priced], "instance_type": table["instance_type"][priced],
            "usd_per_hour": table[column][priced], "as_of": table["observed_date"][priced],
            "source": text[priced]}))
    types = pd.DataFrame(
        [(source.cloud, name, model, count, GPU_MEMORY_GB[model], vcpus, f"{memory:g}")
         for name, model, count, vcpus, memory in source.types],
        columns=["cloud", "instance_type", "gpu_model", "gpu_count", "gpu_memory_gb", "vcpus",
                 "memory_gb"])
    return types, out[0], out[1]


def pricing_rows(document: dict, source: HistorySource, commit: str, day: str) -> list[dict]:
    """The HISTORY_COLUMNS rows of one version of a pricing.yml: per kept machine type and
    region, its hourly on-demand and spot price (rounded to 6 decimals; empty if absent)."""
    instances = (document.get("compute") or {}).get("instance") or {}
    rows = []
    for name, *_ in source.types:
        costs = (instances.get(name) or {}).get("cost") or {}
        for region in source.regions:
            cost = costs.get(region) or {}
            if "hour" not in cost and "hour_spot" not in cost:
                continue
            rows.append({"cloud": source.cloud, "instance_type": name, "region": region,
                         "zone": "", "spot_price_usd_per_hour": _price(cost.get("hour_spot")),
                         "ondemand_usd_per_hour": _price(cost.get("hour")),
                         "observed_date": day, "source_repo": source.repo,
                         "source_path": source.path, "source_commit": commit})
    return rows


def _price(value: object) -> str:
    return "" if value is None else str(round(float(value), 6))  # type: ignore[arg-type]


def fetch_history(source: HistorySource, url: str | None = None) -> pd.DataFrame:
    """Every version of the source's file since `source.since`, read from a blob-less clone
    of its repository (`url`: another clone or a local path instead of GitHub), as
    HISTORY_COLUMNS rows, newest first."""
    url = url or f"https://github.com/{source.repo}.git"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as clone:
        _git("clone", "--quiet", "--filter=blob:none", "--no-checkout", url, clone)
        log = _git("-C", clone, "log", "--format=%H %cs", f"--since={source.since}", "--",
                   source.path)
        for line in log.splitlines():
            commit, day = line.split()
            text = _git("-C", clone, "show", f"{commit}:{source.path}")
            rows += pricing_rows(yaml.load(text, Loader=loader) or {}, source, commit, day)
    return pd.DataFrame(rows, columns=HISTORY_COLUMNS)


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"git {' '.join(args[:3])}: {done.stderr.strip()}")
    return done.stdout


def rebuild(data: Path = DATA, sources_dir: Path = SOURCES_DIR,
            sources: tuple[Source, ...] = SOURCES,
            histories: tuple[HistorySource, ...] = HISTORIES,
            n1_sources: tuple[N1Source, ...] = N1_SOURCES) -> dict[str, pd.DataFrame]:
    """The data files as they should be: the rows the sources give replace those they gave
    before (same source text, or a history's prefix); every other row is kept."""
    types = pd.read_csv(data / "instance_types.csv", dtype=str, keep_default_na=False)
    listed = pd.read_csv(data / "on_demand_prices.csv", dtype=str, keep_default_na=False)
    spots = pd.read_csv(data / "spot_prices.csv", dtype=str, keep_default_na=False)
    texts = {s.text for s in (*sources, *n1_sources)}
    prefixes = tuple(h.prefix for h in histories)
    listed = listed[~listed["source"].isin(texts)]
    spots = spots[~spots["source"].str.split(": median| SpotPrice", regex=True).str[0]
                  .str.rstrip(":").isin(texts)]
    if prefixes:
        listed = listed[~listed["source"].str.startswith(prefixes)]
        spots = spots[~spots["source"].str.startswith(prefixes)]
    read = [source_rows(s, sources_dir) for s in sources]
    priced = frozenset(listed.loc[listed["cloud"] == "gcp", "instance_type"])
    read += [n1_rows(n, sources_dir, data, priced) for n in n1_sources]
    read += [history_rows(h, sources_dir) for h in histories]
    for new_types, on_demand, spot in read:
        known = set(zip(types["cloud"], types["instance_type"], strict=True))
        fresh = new_types[[(c, t) not in known for c, t in
                           zip(new_types["cloud"], new_types["instance_type"], strict=True)]]
        types = pd.concat([types, fresh.astype(str)], ignore_index=True)
        listed = pd.concat([listed, on_demand[listed.columns].astype(str)], ignore_index=True)
        if not spot.empty:
            spots = pd.concat([spots, spot[spots.columns].astype(str)], ignore_index=True)
    return {"instance_types.csv": types, "on_demand_prices.csv": listed,
            "spot_prices.csv": spots}


def write(files: dict[str, pd.DataFrame], data: Path = DATA, check: bool = False) -> list[str]:
    """The names of the data files that differ from `files`; rewritten unless `check`."""
    stale = []
    for name, frame in files.items():
        path = data / name
        old = path.read_bytes()
        ending = "\r\n" if b"\r\n" in old[:4096] else "\n"  # keep the file's own
        text = frame.to_csv(index=False, lineterminator=ending)
        if old.decode() != text:
            stale.append(name)
            if not check:
                path.write_bytes(text.encode())
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="Exit 1 (naming the files) if the data files are out of date.")
    parser.add_argument("--fetch", action="store_true",
                        help="First read every history's file again at each of its commits "
                        "(needs git and the network), rewriting its dated rows.")
    parser.add_argument("--repo-url", default=None,
                        help="With --fetch: clone this URL or path instead of GitHub's.")
    args = parser.parse_args(argv)
    if args.fetch:
        for history in HISTORIES:
            rows = fetch_history(history, args.repo_url)
            rows.to_csv(SOURCES_DIR / history.file, index=False)
            print(f"{history.file}: {len(rows):,} rows from "
                  f"{rows['source_commit'].nunique()} commits of {history.repo}")
    stale = write(rebuild(), check=args.check)
    if args.check and stale:
        print(f"out of date: {', '.join(stale)} (run scripts/build_catalog_snapshot.py)")
        return 1
    print(("rewrote " + ", ".join(stale)) if stale and not args.check else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
