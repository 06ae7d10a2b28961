"""`costsched gpus [MODEL]`: each GPU's cheapest on-demand and spot price now, where, and
how old the price is; with a model, every offering of it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from costsched import bundled_prices
from costsched.amounts import derived_prices, stored_prices
from costsched.bundled_prices import age_text
from costsched.cli.common import (
    IN_MEMORY,
    JsonOption,
    ListPricesDbOption,
    console,
    frame_records,
    friendly_errors,
    future_note,
    options,
    print_json,
    say_list_prices,
    split_csv,
)
from costsched.clouds.hints import catalog_refresh_hint, collect_hint
from costsched.model import InvalidInput
from costsched.vocabulary import counted

if TYPE_CHECKING:
    import pandas as pd

def snapshot_note() -> str:
    """What the prices older than a few days are, and what fetches today's."""
    return ("Prices older than a few days are the bundled list prices and spot snapshot: "
            f"{collect_hint()} fetches today's.")
SUPERSEDED_MARK = "!"
OVER_QUOTA_MARK = "*"
SUMMARY_QUOTA_NOTE = (f"{OVER_QUOTA_MARK} over quota: the account's quota, as last read, "
                      "does not hold one instance of it; `costsched gpus MODEL` names the "
                      "quota and the request to make.")
SUPERSEDED_NOTE = (f"{SUPERSEDED_MARK} superseded: a newer bundled price of the same instance "
                   "type changed since (`costsched prices history --instance TYPE`); ranked "
                   "behind current prices, and plans leave it out.")


@friendly_errors
def gpus(
    gpu: Annotated[str | None, typer.Argument(
        help="A GPU model (A100, v100, nvidia-tesla-t4), or MODEL:COUNT (T4:1) as the "
             "table writes it: list its offerings.",
        show_default=False)] = None,
    cloud: Annotated[list[str] | None, typer.Option("--cloud", help="aws, gcp, azure.",
                                                    show_default=False)] = None,
    at: Annotated[str | None, typer.Option(help="Prices as of this time (ISO 8601; "
                                           "default now).", show_default=False)] = None,
    top: Annotated[int, typer.Option(help="With a model: offerings shown.", min=1)] = 20,
    db: ListPricesDbOption = None,
    json_out: JsonOption = False,
) -> None:
    """GPU models and counts with the cheapest on-demand and spot price now, where, and how
    old each price is (stored prices, else the bundled list prices and spot snapshot)."""
    model, count = _model_and_count(gpu)
    unpriceable = None if model is None else _unpriceable(model)
    if unpriceable:  # one line, as for a model the catalog has no instance type of
        console.print(unpriceable, highlight=False, soft_wrap=True, markup=False)
        return
    with options(cloud="--cloud", at="--at"):
        future_note(at)
        say_list_prices(db)
        rows = _rows(db, model, at, split_csv(cloud))
    if count is not None:
        rows = _of_count(rows, model or "", count)
    if json_out:
        print_json({"gpu": gpu, "rows": rows})
        return
    when = _when(at)
    if not rows:  # one line saying why, not an empty table
        console.print(_why_none(db, gpu, when if at not in (None, "now") else None,
                                split_csv(cloud)), highlight=False, soft_wrap=True, markup=False)
        return
    asked = "now" if at in (None, "now") else f"as of {when:%Y-%m-%d %H:%M} UTC"
    if gpu is None:
        console.print(summary_table(rows, asked))
        marked = any(r.get(f"{m}_superseded") for r in rows for m in ("on_demand", "spot"))
        quota_notes = [SUMMARY_QUOTA_NOTE] if any(
            r.get(f"{m}_quota") for r in rows for m in ("on_demand", "spot")) else []
    else:
        console.print(offerings_table(rows, top, "" if at in (None, "now") else asked))
        marked = any(r["superseded"] for r in rows[:top])
        quota_notes = over_quota_notes(rows[:top])
    if marked:
        console.print(SUPERSEDED_NOTE, highlight=False, soft_wrap=False, markup=False)
    for note in quota_notes:
        console.print(note, highlight=False, soft_wrap=True, markup=False)
    console.print(snapshot_note(), highlight=False, soft_wrap=False, markup=False)


def _unpriceable(model: str) -> str:
    """Why no price of `model` can be known, where tasks know it but no GPU model of the
    catalog is it (RTX4090), said as for a model the catalog has no instance type of; ''
    for a GPU model of the catalog. Any other name is refused in one line."""
    try:
        bundled_prices.gpu_model_name(model)
        return ""
    except InvalidInput:
        from costsched.skypilot_fields import known_accelerator

        known = known_accelerator(model)
        if known is None:
            raise
    return (f"No price of {known} is known: costsched's catalog has no instance type with "
            f"{known} ({catalog_refresh_hint()} finds new GPU instance types; the GPU "
            f"models it has: {', '.join(bundled_prices.GPU_MODELS)})")


def _when(at: str | None) -> datetime:
    if at is None or at == "now":
        return datetime.now(timezone.utc)
    from costsched.service.values import as_time

    return as_time(at, "at")


def _why_none(db: str | None, gpu: str | None, when: datetime | None,
              clouds: list[str]) -> str:
    """Why no price is shown: none known as of the time asked (the oldest known said), or
    none at all of the GPU and clouds asked."""
    from costsched.service.gpus import oldest_price

    models = [] if gpu is None else [bundled_prices.gpu_model_name(
        _model_and_count(gpu)[0] or gpu)]
    named = gpu and models[0] + (f":{gpu.partition(':')[2]}" if ":" in gpu else "")
    what = " ".join(part for part in (
        f"of {named}" if named else "", f"in {', '.join(clouds)}" if clouds else "") if part)
    oldest = oldest_price(db, clouds=clouds, gpu_models=models, bundled_only=db == IN_MEMORY)
    known = f"No price {what} is known".replace("  ", " ")
    if oldest is None and models:
        return known + _unpriced(db, models[0], clouds)
    if oldest is None:
        return f"{known} ({collect_hint(clouds)} or `costsched prices import FILE` stores some)"
    at = "now" if when is None else f"as of {when:%Y-%m-%d %H:%M} UTC"
    return (f"{known} {at}: the oldest price known is of "
            f"{oldest:%Y-%m-%d %H:%M} UTC (--at that time or later shows prices)")


def _unpriced(db: str | None, model: str, clouds: list[str]) -> str:
    """Why a GPU model has no price, and what would give it one: the instance types of
    it that a collect would price (none in the catalog: a refresh of the catalog finds
    them), and the GPU models with prices whose names are close ("; did you mean 'A10G'?")."""
    from costsched import catalog
    from costsched.bundled_prices import closest_gpus
    from costsched.vocabulary import meant

    priced = dict.fromkeys(str(r["gpu_model"]) for r in _rows(db, None, None, clouds))
    close = meant(closest_gpus(model, priced))
    types = catalog.instance_types()
    if not ((types["gpu_model"] == model)
            & (types["cloud"].isin(clouds) if clouds else True)).any():
        return (f": costsched's catalog has no instance type with {model}"
                f"{' in ' + ', '.join(clouds) if clouds else ''} "
                f"({catalog_refresh_hint(clouds)} finds new GPU instance types){close}")
    return (f" ({collect_hint(clouds, gpus=[model])} or `costsched prices import FILE` stores "
            f"some){close}")


def _model_and_count(gpu: str | None) -> tuple[str | None, int | None]:
    """'T4' -> ('T4', None): every count; 'T4:1' -> ('T4', 1), as the summary writes it."""
    if gpu is None or ":" not in gpu:
        return gpu, None
    from costsched.jobspec import parse_gpu

    try:
        return parse_gpu(gpu)
    except InvalidInput as exc:  # the model's own refusal, with the close names
        raise InvalidInput(f"argument GPU: {exc}") from None
    except ValueError as exc:
        raise InvalidInput(f"argument GPU: {exc}{_count_meant(gpu)}") from None


# A count written as a word ('a10g:one'), as far as GPUs come in one instance.
_COUNT_WORDS = {w: n for n, w in enumerate(
    ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight"))}


def _count_meant(gpu: str) -> str:
    """"; did you mean 'A10G:1'?" for a GPU written with a count that is no whole number
    ('a10g:one', 'A10G:1.0', 'a10g:x1'), the model as the catalog spells it; '' when the
    model is no GPU's name (its own refusal says the close ones) or no count is meant."""
    name, _, count = gpu.partition(":")
    word = count.strip().lower().lstrip("x").removesuffix(".0")
    n = max(int(word) if word.isdigit() else _COUNT_WORDS.get(word, 1), 1)
    try:
        model = bundled_prices.gpu_model_name(name)
    except InvalidInput:  # the close names, with the count meant, as a task's GPU gets
        from costsched.skypilot_fields import _meant

        said = _meant(name, n, counted=True)
        return f"; {said}" if said.startswith("did you mean") else ""
    return f"; did you mean '{model}:{n}'?"


def _of_count(rows: list[dict[str, Any]], model: str, count: int) -> list[dict[str, Any]]:
    kept = [r for r in rows if r["gpu_count"] == count]
    if rows and not kept:
        counts = ", ".join(str(n) for n in sorted({int(r["gpu_count"]) for r in rows}))
        raise InvalidInput(f"argument GPU: no {model}:{count} offering is priced; "
                           f"{model} comes in counts {counts}")
    return kept


def _rows(db: str | None, gpu: str | None, at: str | None,
          clouds: list[str]) -> list[dict[str, Any]]:
    """The rows shown, NaN as None. With no store to read (none made yet) or a SQLite
    store at the newest schema that holds no quotas, from the bundled files, the
    discovered types and the store's file by the standard library alone (the quick path:
    no pandas, no database layer); else through the service, from the store."""
    from costsched.service import glance

    when = _when(at)
    # The clouds and the model are checked before the store is read.
    wanted = bundled_prices.cloud_names(clouds)
    models = [] if gpu is None else [bundled_prices.gpu_model_name(gpu)]
    stored = ([] if db == IN_MEMORY else
              glance.stored_gpu_prices(db, when, clouds=wanted, gpu_models=models))
    markets = {} if db == IN_MEMORY or stored is None else glance.stored_spot_markets(db, when)
    if stored is not None and markets is not None:
        if gpu is None:
            return bundled_prices.gpu_summary(when, clouds=clouds, stored=stored,
                                              spot_markets=markets)
        return bundled_prices.gpu_offerings(gpu, when, clouds=clouds, stored=stored,
                                            spot_markets=markets)
    from costsched.service.gpus import gpu_offerings, gpu_summary

    if gpu is None:
        return frame_records(gpu_summary(db, at, clouds=clouds))
    return frame_records(gpu_offerings(db, gpu, at, clouds=clouds))


def _records(rows: pd.DataFrame | Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return frame_records(rows) if hasattr(rows, "to_dict") else list(rows)  # type: ignore[arg-type]


def _table(title: str) -> Table:
    return Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1),
                 header_style="bold")


GAP = " "  # a cell's own space before it, beside the one between columns


def summary_table(rows: pd.DataFrame | Iterable[Mapping[str, Any]],
                  asked: str = "now") -> Table:
    """One row per GPU model and count (a frame or its records, missing values None): each
    market's price with its own age (SUPERSEDED_MARK after a superseded one's) and place;
    fits 80 columns (places fold, figures never cut). `asked`: the time of the prices
    ('now', 'as of 2026-01-01 00:00 UTC')."""
    out = _table(f"Cheapest price per GPU model and count, {asked}")
    # Two spaces before an age and a place, one where a left-aligned cell meets a price
    # aligned right (a gap of its own): 80 columns hold both markets' cells, each price
    # at its column's one precision ('$26.374103').
    out.padding = (0, 0, 0, 0)
    out.add_column("GPUs", no_wrap=True)
    for market in ("on-demand", "spot"):
        out.add_column(market, justify="right", no_wrap=True)
        out.add_column(f"{GAP}age", justify="right", no_wrap=True)
        out.add_column(f"{GAP}where", overflow="fold")
    records = _records(rows)
    # each market's column at one precision
    prices = {market: stored_prices([r.get(f"{market}_usd_per_hour") for r in records])
              for market in ("on_demand", "spot")}
    for i, row in enumerate(records):
        cells = [f"{row['gpu_model']}:{row['gpu_count']}"]
        for market in ("on_demand", "spot"):
            where = row.get(f"{market}_where")
            age = row.get(f"{market}_age_days")
            over = OVER_QUOTA_MARK if row.get(f"{market}_quota") else ""
            cells += [prices[market][i],
                      GAP + _age(age if age is not None else float("nan"),
                                 bool(row.get(f"{market}_superseded"))),
                      GAP + (_place(where) + over if isinstance(where, str) else "-")]
        out.add_row(*(Text(c) for c in cells))
    return out


def _age(days: float, superseded: bool) -> str:
    return age_text(days) + (SUPERSEDED_MARK if superseded else "")


def offerings_table(rows: pd.DataFrame | Iterable[Mapping[str, Any]], top: int,
                    asked: str = "") -> Table:
    """One GPU model's offerings (a frame or its records), the first `top` of them, priced
    `asked` ('as of 2026-01-01 00:00 UTC'; '': now)."""
    every = _records(rows)
    shown = every[:top]
    model = shown[0]["gpu_model"] if shown else ""
    more = f"; --top {len(every)} shows all" if len(shown) < len(every) else ""
    out = _table(f"{model}: {counted(len(every), 'offering')} priced"
                 f"{' ' + asked if asked else ''}, "
                 f"{len(shown):,} shown "
                 f"(fewest GPUs first, then current before superseded, then cheapest){more}")
    for name, right in (("GPUs", True), ("market", False), ("$/h", True), ("$/GPU-h", True),
                        ("age", True), ("where", False), ("instance type", False)):
        out.add_column(name, justify="right" if right else "left", no_wrap=right,
                       overflow="fold")
    prices = stored_prices([r["usd_per_hour"] for r in shown])
    per_gpu = derived_prices([r["usd_per_gpu_hour"] for r in shown],
                             [r["usd_per_hour"] for r in shown])
    for r, price, gpu_price in zip(shown, prices, per_gpu, strict=True):
        out.add_row(*(Text(c) for c in (
            str(r["gpu_count"]), r["market"].replace("_", "-"), price, gpu_price,
            _age(r["age_days"], bool(r["superseded"])),
            f"{r['cloud']} {r['zone'] or r['region']}"
            + (f" {OVER_QUOTA_MARK}" if r.get("quota") else ""),
            r["instance_type"])))  # as `plan` names it, and `migrate --to` takes it
    return out


def over_quota_notes(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per quota that does not hold offerings of `rows`, naming them."""
    named: dict[str, list[str]] = {}
    for r in rows:
        if r.get("quota"):
            named.setdefault(str(r["quota"]), []).append(
                f"{r['cloud']} {r['zone'] or r['region']} {r['instance_type']}"
                f" {r['market'].replace('_', '-')}")
    return [f"{OVER_QUOTA_MARK} over quota: {', '.join(where)}: {why}"
            for why, where in named.items()]


def _place(where: str) -> str:
    """'aws us-east-1 g5.xlarge' -> 'aws us-east-1': the instance type is in `gpus MODEL`
    (and in --json)."""
    return " ".join(where.split(" ")[:2])
