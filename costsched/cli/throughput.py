"""`costsched throughput ...`: show the throughput table, record your own measurements."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from costsched import throughput as tp
from costsched.catalog import gpu_model_name
from costsched.cli.common import (
    DbOption,
    JsonOption,
    console,
    frame_records,
    friendly_errors,
    print_json,
    reads_store,
    refuse_url,
    split_csv,
    table,
    user_text,
)
from costsched.jobspec import parse_gpu
from costsched.model import InvalidInput
from costsched.service import throughputs
from costsched.validation import MAX_GPUS
from costsched.vocabulary import counted

app = typer.Typer(help="Throughput (steps/s) of models on GPUs: bundled, measured, estimated.",
                  no_args_is_help=True)

FileOption = Annotated[Path | None, typer.Option(
    "--file", help="The measurements file (default: $COSTSCHED_THROUGHPUTS, else "
    "throughputs.csv in the user data directory).", show_default=False)]
DEFAULT_COUNTS = (1, 2, 4, 8)
CAPPED_MARK = "^"
CAP_COLUMNS = ["capped", "published_steps_per_second", "capped_steps_per_second"]
CAPPED_NOTE = (f"{CAPPED_MARK} capped at linear scaling: a bundled multi-GPU figure above n x "
               "the 1-GPU figure of the same model and GPU; plans and backtests use n x the "
               "1-GPU figure unless you measure it (costsched throughput set MODEL GPU:N "
               "STEPS_PER_SECOND).")


@app.command("show")
@friendly_errors
def show(
    model: Annotated[str | None, typer.Option(help="One model: every GPU model and count, "
                                              "with estimates and their rules.",
                                              show_default=False)] = None,
    gpu: Annotated[list[str] | None, typer.Option("--gpu", help="GPU model(s).")] = None,
    count: Annotated[list[int] | None, typer.Option("--count", help="GPU count(s).")] = None,
    precision: Annotated[str, typer.Option(help="fp32 | fp16: the peak used to estimate "
                                           "unmeasured GPU models.")] = "fp32",
    measured: Annotated[bool, typer.Option(
        "--measured", help="The runs costsched measured, one row each (newest first).")
                        ] = False,
    file: FileOption = None,
    db: Annotated[str | None, typer.Option(
        "--db", help="SQLAlchemy URL or SQLite file path of the store whose measured runs "
        "are shown over the bundled figures (default: $COSTSCHED_DB, else a file in the "
        "user data directory; without one, the bundled figures and yours).",
        show_default=False)] = None,
    json_out: JsonOption = False,
) -> None:
    """The table as plans use it: measured rows (yours override those costsched measured
    on its runs, which override the bundled ones), or with --model every GPU model and
    count, estimated where nothing was measured."""
    if file is not None and file.is_dir():
        raise InvalidInput(f"--file {file}: a directory: expected the measurements CSV file")
    if file is not None and not file.is_file():
        raise InvalidInput(f"--file {file}: no such file (`throughput set` and `throughput "
                           "import` make one)")
    if measured:
        _show_runs(reads_store(db), model, json_out)
        return
    if _no_store(db):  # the bundled figures and the user's need none
        table_ = tp.ThroughputTable.load(file, precision=precision)
    else:
        table_ = throughputs.table_with_measured(db, file, precision=precision)
    gpus = [gpu_model_name(g) for g in split_csv(gpu)]
    for n in count or ():
        if not 1 <= n <= MAX_GPUS:
            raise InvalidInput(f"--count {n}: expected a whole number from 1 to {MAX_GPUS}")
    if model is None:
        frame = _measured(table_)
        if gpus:
            frame = frame[frame["gpu_model"].isin(gpus)]
        if count:
            frame = frame[frame["gpu_count"].isin(count)]
        title = (f"Measured throughputs: {counted(frame['model'].nunique(), 'model')}, "
                 f"{counted(len(frame), 'row')}")
    else:
        name = table_.canonical(model)
        rows = []
        for g in gpus or list(tp.GPU_SPECS):
            for n in count or DEFAULT_COUNTS:
                t = table_.get(name, g, n)
                rows.append((name, g, n, t.steps_per_second, t.basis, t.estimated, t.capped,
                             t.published, t.steps_per_second if t.capped else None))
        frame = pd.DataFrame(rows, columns=[*tp.COLUMNS, "estimated", *CAP_COLUMNS])
        title = f"{name}: steps/s per GPU model and count as used (* estimated)"
    frame = frame.sort_values(["model", "gpu_model", "gpu_count"], ignore_index=True)
    if json_out:
        print_json({"precision": precision, "user_file": str(file or tp.user_path()),
                    "throughputs": frame_records(frame)})
        return
    out = [[r.model, r.gpu_model, str(r.gpu_count),
            f"{r.steps_per_second:.4g}" + ("*" if r.estimated else "")
            + (CAPPED_MARK if r.capped else ""), r.source]
           for r in frame.itertuples()]
    console.print(table(title, ["model", "GPU", "GPUs", "steps/s", "source or rule"], out))
    if frame["capped"].any():
        console.print(CAPPED_NOTE, highlight=False, markup=False)


def _no_store(db: str | None) -> bool:
    """Whether there is no store to read costsched's measurements from: no --db (one given
    must exist) and no default store ($COSTSCHED_DB, else the user data directory's)."""
    from costsched.service.store_files import missing_store

    if db is not None:
        reads_store(db)
        return False
    refuse_url(None, None)  # $COSTSCHED_DB's: named, as every command names it
    return missing_store(None) is not None


def _show_runs(db: str | None, model: str | None, json_out: bool) -> None:
    frame = throughputs.measured(db, model)
    note = throughputs.unlearned(db)  # runs that taught nothing, and why
    if json_out:
        print_json({"source": tp.MEASURED_BY_COSTSCHED, "runs": frame_records(frame),
                    "not_learned": note or None})
        return
    rows = [[r.model, r.gpu_model, str(r.gpu_count), r.precision, f"{r.steps_per_second:.4g}",
             f"{r.steps:,.0f} in {r.seconds / 60:,.1f} min", f"{r.measured_at:%Y-%m-%d %H:%M}",
             f"job {r.job_id}", r.instance] for r in frame.itertuples()]
    console.print(table(f"Throughputs {tp.MEASURED_BY_COSTSCHED}: {counted(len(frame), 'run')}",
                        ["model", "GPU", "GPUs", "precision", "steps/s", "steps", "measured",
                         "job", "instance"], rows))
    if note:
        console.print(note, highlight=False, markup=False, soft_wrap=True)


@app.command("forget")
@friendly_errors
def forget(
    model: Annotated[str | None, typer.Argument(help="The model (default every model).",
                                                show_default=False)] = None,
    gpu: Annotated[str | None, typer.Option(help="One GPU model, or GPU:COUNT.",
                                            show_default=False)] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Forget throughputs costsched measured (plans go back to your figures, the bundled
    ones or estimates); the runs forgotten are not measured again."""
    gpu_model = count = None
    if gpu is not None:
        try:
            gpu_model, count = parse_gpu(gpu)
        except (ValueError, InvalidInput) as exc:
            raise InvalidInput(f"--gpu {gpu!r}: {exc}") from None
        count = count if ":" in gpu else None
        if count is not None and count > MAX_GPUS:
            raise InvalidInput(f"--gpu {gpu!r}: expected GPU or GPU:COUNT with a count from 1 "
                               f"to {MAX_GPUS}, such as V100 or V100:8")
    n = throughputs.forget(db, model=model, gpu_model=gpu_model, gpu_count=count)
    if json_out:
        print_json({"forgotten": n})
        return
    console.print(f"forgot {n} measured run{'s' if n != 1 else ''}", highlight=False, markup=False)


def _measured(table_: tp.ThroughputTable) -> pd.DataFrame:
    """The measured rows as published; a capped row's source says so and gives the cap."""
    frame = table_.measured_rows().assign(estimated=False)
    frame["published_steps_per_second"] = frame["steps_per_second"].where(frame["capped"])
    for i in frame.index[frame["capped"]]:
        r = frame.loc[i]
        capped = table_.measured(r["model"], r["gpu_model"], int(r["gpu_count"]))
        assert capped is not None
        frame.loc[i, "source"] = capped.basis
    return frame[[*tp.COLUMNS, "estimated", *CAP_COLUMNS]]


@app.command("set")
@friendly_errors
def set_(
    model: Annotated[str, typer.Argument(help="Model name, e.g. 'ResNet-50 (batch size 64)'.")],
    gpu: Annotated[str, typer.Argument(help="GPU model, or GPU:COUNT (V100, V100:8).")],
    steps_per_second: Annotated[float, typer.Argument(help="Measured training steps/s.")],
    source: Annotated[str | None, typer.Option(help="Where the figure comes from.",
                                               show_default=False)] = None,
    file: FileOption = None,
    json_out: JsonOption = False,
) -> None:
    """Record a measured throughput; it overrides the bundled value and any estimate."""
    try:
        gpu_model, count = parse_gpu(gpu)
    except (ValueError, InvalidInput) as exc:
        raise InvalidInput(f"GPU {gpu!r}: {exc}") from None
    if count > MAX_GPUS:
        raise InvalidInput(f"GPU {gpu!r}: expected a count from 1 to {MAX_GPUS}, such as V100:8")
    row = pd.DataFrame([(model, gpu_model, count, steps_per_second, tp.measured_today(source))],
                       columns=tp.COLUMNS)
    path = tp.save_user(row, file)
    if json_out:
        print_json({"file": str(path), "saved": frame_records(row)})
        return
    console.print(user_text(f"saved {model} on {count}x{gpu_model}: {steps_per_second:g} "
                            f"steps/s to {path}"), highlight=False)


@app.command("import")
@friendly_errors
def import_(
    csv: Annotated[str, typer.Argument(help="CSV: model, gpu_model, gpu_count, "
                                       "steps_per_second[, source].")],
    file: FileOption = None,
    json_out: JsonOption = False,
) -> None:
    """Import measured throughputs from a CSV (all rows or none)."""
    from costsched.config import effective

    if not csv:  # as a Path, the current folder
        raise InvalidInput("csv '': expected a CSV file of measurements (model, gpu_model, "
                           "gpu_count, steps_per_second[, source])")
    rows = tp.read_measurements(Path(csv), effective().files.throughputs_mb)
    if "user measured" in set(rows["source"]):
        rows.loc[rows["source"] == "user measured", "source"] = tp.measured_today(
            f"user measured, imported from {Path(csv).name}")
    path = tp.save_user(rows, file)
    if json_out:
        print_json({"file": str(path), "imported": len(rows)})
        return
    console.print(f"imported {counted(len(rows), 'measurement')} to {user_text(path)}",
                  highlight=False)
