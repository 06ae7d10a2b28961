"""What a SkyPilot task is told when its `instance_type` and `accelerators` are not one
type of the catalog: the type has other GPUs (g4dn.xlarge has 1xT4, not A100:1), or the
machine type comes with other GPUs attached (GCP's n1-standard-8 with T4, V100, P100 or
P4, not A100:1; n1-highcpu-96 not with T4:1, over GCP's limit). Catalog in, words out."""

from __future__ import annotations

from collections.abc import Collection

from costsched import catalog, n1_gpu_limits
from costsched.clouds.hints import catalog_refresh_hint
from costsched.lazy import pandas as pd

TYPES_SHOWN = 4  # instance types named as those with the GPUs asked


def other_gpus(named: dict, gpus: list[tuple[str, int]], key: str,
               types: pd.DataFrame) -> str:
    """An instance type of the catalog whose GPUs are not the task's accelerators: what it
    has, and the two ways out (the types with those GPUs, the first few)."""
    has = (f"{int(named['gpu_count'])}x{named['gpu_model']}" if named["gpu_count"]
           else "no GPU")
    asked = " or ".join(f"{g}:{n}" for g, n in gpus)
    if "retired" in types.columns:
        types = types[types["retired"].isna()]
    names = sorted(set(types["instance_type"]))
    listed = (f" ({', '.join(names[:TYPES_SHOWN])}{', ...' if len(names) > TYPES_SHOWN else ''})"
              if names else "")
    article = "an" if asked[:1].upper() in "AEFHILMNORSX" else "a"
    return (f"{named['instance_type']} has {has}, not {asked}: drop `{key}` or name "
            f"{article} {asked} type{listed}")


def machine_gpus(name: str, gpus: list[tuple[str, int]], clouds: Collection[str],
                 where: str, key: str) -> str:
    """A machine type the catalog has only with GPUs attached ('n1-standard-8+1xnvidia-
    tesla-v100'), none of them the task's: where its GPUs come (on the machine type's
    cloud, else any of `clouds`) and what the machine type comes with; '' when the
    catalog has no such machine type (a name it does not know)."""
    types = catalog.instance_types()
    types = types[types["retired"].isna()]
    if clouds:
        types = types[types["cloud"].isin(list(clouds))]
    base = types["instance_type"].str.split("+", n=1).str[0]
    machine = types[(base == name) & types["instance_type"].str.contains("+", regex=False)]
    if machine.empty:
        return ""
    asked = " or ".join(f"{g}:{n}" for g, n in gpus)
    pairs = pd.Series(list(zip(types["gpu_model"], types["gpu_count"], strict=True)),
                      index=types.index)
    with_gpus = types[pairs.isin(gpus)]
    own = with_gpus[with_gpus["cloud"].isin(set(machine["cloud"]))]
    with_gpus = own if not own.empty else with_gpus
    shape = machine.iloc[0]
    over = n1_gpu_limits.over_limit(name, float(shape["vcpus"]), float(shape["memory_gb"]),
                                    gpus)
    said = [f"{name} with {asked} is not in costsched's catalog", *([over] if over else [])]
    if not with_gpus.empty:
        bases = with_gpus.assign(base=with_gpus["instance_type"].str.split("+", n=1).str[0])
        family = bases[bases["base"].str.rsplit("-", n=1).str[0] == name.rsplit("-", 1)[0]]
        if over and not family.empty:  # the sizes of its own family that take them
            sizes = list(family.sort_values("vcpus", kind="stable")["base"].drop_duplicates())
            shown = sizes[0] if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
        else:
            names = sorted(set(bases["base"]))
            shown = ", ".join(names[:TYPES_SHOWN]) + (", ..." if len(names) > TYPES_SHOWN
                                                      else "")
        said.append(f"{asked} comes on {shown} ({', '.join(sorted(set(with_gpus['cloud'])))})")
    change = f"; change {where}.instance_type or {where}.{key}"
    if not over:  # (a pair GCP does not attach is in no newer catalog either)
        change += (f" ({catalog_refresh_hint(sorted(set(machine['cloud'])))} adds the "
                   "clouds' newer types, `sky launch` looks it up in SkyPilot's catalog)")
    return (f"{said[0]}: " + "; ".join([*said[1:], f"{name} comes with {_attached(machine)}"])
            + change)


def _attached(machine: pd.DataFrame) -> str:
    """The GPUs a machine type comes with, per model: 'T4 (1, 2 or 4) or V100 (1 or 2)'."""
    counts: dict[str, set[int]] = {}
    for gpu, count in zip(machine["gpu_model"], machine["gpu_count"], strict=True):
        counts.setdefault(str(gpu), set()).add(int(count))
    parts = [f"{gpu} ({_either(sorted(n))})" if len(n) > 1 else f"{gpu}:{min(n)}"
             for gpu, n in sorted(counts.items())]
    return _either(parts)


def _either(items: list) -> str:
    """'a', 'a or b', 'a, b or c'."""
    items = [str(i) for i in items]
    return " or ".join([", ".join(items[:-1]), items[-1]] if len(items) > 1 else items)
