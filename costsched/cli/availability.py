"""`costsched prices availability`: the spot availability the store knows, per offering."""

from __future__ import annotations

from costsched.cli.common import (
    EmptyDbOption,
    JsonOption,
    console,
    frame_records,
    friendly_errors,
    print_json,
    say_no_store,
    table,
)
from costsched.service.prices import spot_availability


@friendly_errors
def availability_cmd(db: EmptyDbOption = None, json_out: JsonOption = False) -> None:
    """Spot availability imported from traces and probe logs: per offering and source,
    the time observed and the share of it spot was available (or a probed instance ran)."""
    frame = spot_availability(db)
    say_no_store(db)
    if json_out:
        print_json(frame_records(frame))
        return
    if frame.empty:
        console.print("No spot availability stored. `costsched prices import` reads spot "
                      "traces (*.json) and probe logs (*.out).")
        return
    rows = [[f"{r.cloud} {r.zone}", r.instance_type, f"{r.gpu_count}x{r.gpu_model}", r.kind,
             r.source, f"{r.first:%Y-%m-%d %H:%M}", f"{r.last:%Y-%m-%d %H:%M}",
             f"{r.hours:,.1f}", f"{r.available_share:.0%}", f"{r.intervals:,}"]
            for r in frame.itertuples()]
    console.print(table("Spot availability (times UTC)",
                        ["where", "instance type", "GPUs", "kind", "source", "from", "to",
                         "h", "available %", "intervals"], rows))
