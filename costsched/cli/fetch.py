"""`costsched fetch JOB FOLDER`: a job's newest verified checkpoint, and what it wrote
beside it, copied to a folder of yours."""

from __future__ import annotations

from typing import Annotated

import typer

from costsched.cli.common import (
    DbOption,
    JobArgument,
    JsonOption,
    console,
    friendly_errors,
    print_json,
    printable,
)
from costsched.vocabulary import counted


@friendly_errors
def fetch(job: JobArgument,
          folder: Annotated[str, typer.Argument(
              help="Where to copy it: a new or empty folder.", show_default=False)],
          db: DbOption = None, json_out: JsonOption = False) -> None:
    """Copy a job's newest verified checkpoint, with the files the job wrote beside it (a
    model, results, logs), to a new or empty folder.

    A finished job's outputs, or a checkpoint to look at. Every file is checked against
    its manifest."""
    from costsched.service.jobs.fetched import fetch as fetched
    from costsched.service.stores import using

    with using(db) as store:
        got = fetched(store, job, folder)
    if json_out:
        print_json({"job": got.job_id, "name": got.name, "version": got.version,
                    "step": got.step, "step_inferred": got.step_inferred,
                    "folder": str(got.folder), "files": list(got.files)})
        return
    step = ("" if got.step is None else
            f", {'about ' if got.step_inferred else ''}step {got.step:,}")
    console.print(printable(f"job {got.job_id} ({got.name}): checkpoint version {got.version}"
                            f"{step}, {counted(len(got.files), 'file')} in {got.folder}"),
                  highlight=False, markup=False)
    for name in got.files:
        console.print(printable(f"  {name}"), highlight=False, markup=False)
