"""`costsched catalog`: the GPU instance types (bundled and discovered) and their on-demand
list prices; `costsched catalog refresh` discovers the types each cloud sells now."""

from __future__ import annotations

from typing import Annotated

import pandas as pd
import typer

from costsched import catalog as catalog_data
from costsched.amounts import derived_prices, stored_prices
from costsched.cli.common import (
    JsonOption,
    WideOption,
    console,
    frame_records,
    friendly_errors,
    options,
    print_json,
    split_csv,
    table,
)
from costsched.clouds.hints import collect_hint
from costsched.model import CLOUDS
from costsched.service.values import choices
from costsched.service.values import regions as known_regions

app = typer.Typer(no_args_is_help=False, invoke_without_command=True,
                  help="The GPU instance types (bundled and discovered), with their regions "
                       "and on-demand list prices; `catalog refresh` discovers what each cloud "
                       "sells now.")


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    gpu: Annotated[list[str] | None, typer.Option("--gpu", help="GPU model(s).")] = None,
    cloud: Annotated[list[str] | None, typer.Option("--cloud", help="aws, gcp, azure.")] = None,
    json_out: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """The GPU instance types (bundled, and discovered by `catalog refresh`), with their
    regions and on-demand list prices."""
    if ctx.invoked_subcommand is None:
        catalog_cmd(gpu=gpu, cloud=cloud, json_out=json_out, wide=wide)


@app.command("refresh")
@friendly_errors
def refresh_cmd(
    cloud: Annotated[list[str] | None, typer.Option("--cloud", help="aws, gcp, azure "
                                                    "(default: all).")] = None,
    region: Annotated[list[str] | None, typer.Option("--region", help="Only these regions "
                                                     "(default: every region).")] = None,
    json_out: JsonOption = False,
) -> None:
    """Discover the GPU instance types each cloud sells now, from its own API, and add the
    new ones to the catalog; the next `costsched collect` prices them."""
    from price_collectors import discovery

    clouds = choices("--cloud", split_csv(cloud), CLOUDS) or list(CLOUDS)
    with options(region="--region"):
        regions = known_regions(split_csv(region), clouds)
    result = discovery.refresh(clouds, regions)
    if json_out:
        print_json({"path": str(result.path) if result.path else None,
                    "clouds": {c: {"types": frame_records(f.types), "new": f.new,
                                   "ignored": dict(f.ignored)}
                               for c, f in result.found.items()},
                    "errors": result.errors})
    else:
        for line in result.lines():
            console.print(line, highlight=False, soft_wrap=True, markup=False)
        if result.path:
            console.print(f"saved to {result.path}; {collect_hint(split_csv(cloud))} prices "
                          "the new types",
                          highlight=False, soft_wrap=True, markup=False)
    if not result.found:
        raise typer.Exit(1)


@friendly_errors
def catalog_cmd(
    gpu: list[str] | None = None,
    cloud: list[str] | None = None,
    json_out: bool = False,
    wide: bool = False,
) -> None:
    """The GPU instance types, with their regions and on-demand list prices."""
    types = catalog_data.instance_types()
    listed = catalog_data.on_demand_prices()
    gpus = [catalog_data.gpu_model_name(g) for g in split_csv(gpu)]
    clouds = choices("--cloud", split_csv(cloud), CLOUDS)
    if gpus:
        types = types[types["gpu_model"].isin(gpus)]
    if clouds:
        types = types[types["cloud"].isin(clouds)]
    per_type = listed.groupby(["cloud", "instance_type"]).agg(
        regions=("region", lambda r: sorted(set(r))),
        min_usd_per_hour=("usd_per_hour", "min"),
        max_usd_per_hour=("usd_per_hour", "max"),
        as_of=("as_of", "max"),
    )
    frame = types.merge(per_type.reset_index(), on=["cloud", "instance_type"], how="left")
    frame = frame.sort_values(["gpu_model", "cloud", "gpu_count", "min_usd_per_hour"])
    if json_out:
        records = frame_records(frame)
        print_json({"version": catalog_data.CATALOG_VERSION, "instance_types": records})
        return
    lowest = list(frame["min_usd_per_hour"])
    prices = stored_prices(lowest)
    per_gpu = derived_prices(list(frame["min_usd_per_hour"] / frame["gpu_count"]), lowest)
    rows = [
        [r.cloud, r.instance_type, f"{r.gpu_count}x{r.gpu_model}", str(r.vcpus),
         f"{r.memory_gb:g}", price, gpu_price,
         ", ".join(r.regions) if isinstance(r.regions, list) else "-", str(r.as_of),
         "-" if pd.isna(r.retired) else f"{r.retired:%Y-%m-%d}"]
        for r, price, gpu_price in zip(frame.itertuples(), prices, per_gpu, strict=True)
    ]
    console.print(table(f"Catalog {catalog_data.CATALOG_VERSION}: {len(frame)} GPU instance types",
                        ["cloud", "instance type", "GPUs", "vCPUs", "GiB", "from $/h",
                         "$/GPU-h", "regions", "as of", "retired"], rows,
                        detail=["retired", "as of", "GiB", "vCPUs", "regions", "$/GPU-h"],
                        wide=wide), soft_wrap=wide)
