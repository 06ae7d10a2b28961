"""What the catalog offers instead of GPUs a job's clouds do not have at the count asked:
the counts those clouds have the GPU at, a close model (of its family) they have at that
count, and the clouds that have it at that count.

    offered_instead([("A100", 1)], {"aws"})
    # ['on aws A100 comes as 8 GPUs (p4d.24xlarge)', 'A100:1 is offered on gcp (a2-highgpu-1g)']
    offered_instead([("A100", 1)], {"azure"})
    # ['on azure a close model is offered: A100-80GB:1 (Standard_NC24ads_A100_v4)', ...]
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from costsched import catalog

TYPES_SHOWN = 3  # instance types named beside a count or a cloud


def offered_instead(gpus: Sequence[tuple[str, int]], clouds: Collection[str]) -> list[str]:
    """For each (GPU model, count) asked: the counts `clouds` have the model at, the close
    models (`catalog.gpu_family`) they have at that count, and the other clouds that have
    it at that count, each with its instance types (types their cloud retired are left
    out). No `clouds`: every cloud's counts."""
    types = catalog.instance_types()
    types = types[types["retired"].isna()]
    clouds = clouds or set(types["cloud"])
    out = []
    for gpu, count in gpus:
        model = types[types["gpu_model"] == gpu]
        for cloud, rows in model[model["cloud"].isin(list(clouds))].groupby("cloud", sort=True):
            counts = sorted({int(n) for n in rows["gpu_count"]})
            said = " or ".join([", ".join(map(str, counts[:-1])), str(counts[-1])]
                               if len(counts) > 1 else [str(counts[0])])
            out.append(f"on {cloud} {gpu} comes as {said} GPU{'s' * (counts != [1])}"
                       f"{_named(rows['instance_type'])}")
        close = types[(types["gpu_model"] != gpu) & (types["gpu_count"] == count)
                      & types["cloud"].isin(list(clouds))]
        close = close[close["gpu_model"].astype(str).map(catalog.gpu_family)
                      == catalog.gpu_family(gpu)]
        for (cloud, other_gpu), rows in close.groupby(["cloud", "gpu_model"], sort=True):
            if cloud not in set(model["cloud"][model["gpu_count"] == count]):
                out.append(f"on {cloud} a close model is offered: {other_gpu}:{count}"
                           f"{_named(rows['instance_type'])}")
        other = model[(model["gpu_count"] == count) & ~model["cloud"].isin(list(clouds))]
        if not other.empty:
            places = [f"{cloud}{_named(rows['instance_type'])}"
                      for cloud, rows in other.groupby("cloud", sort=True)]
            out.append(f"{gpu}:{count} is offered on {' and '.join(places)}")
    return out


def _named(names: Collection[str]) -> str:
    """' (a, b)' naming the types when they are few, else ''."""
    names = sorted(set(names))
    return f" ({', '.join(names)})" if len(names) <= TYPES_SHOWN else ""
