"""The line of a "no plan" of a job that asks for capacity booked ahead (capacity blocks,
reservations, flex-start) the store has no offering of: the `costsched collect` that gets
such offerings, as a spot "no price" gets its `collect` line (`unmatched_collect`), with
the `pip install` of what this machine's collectors lack first.

Capacity blocks and reservations are weighed beside spot and on-demand (`optimize.booked`),
never alone: a job whose markets leave both out is told so. Flex-start prices come with
GCP's prices and are ranked like any hourly price.
"""

from __future__ import annotations

from costsched.clouds.hints import collect_command
from costsched.lazy import pandas as pd
from costsched.model import BOOKED_MARKETS, Constraints
from costsched.optimize.job import Workload
from costsched.optimize.no_plan_keys import key
from costsched.optimize.unmatched_collect import collect_line

# Each booked market: the clouds that sell it, and what `collect` collects of it there (in
# the words of `launch --book`'s line, `service.booking.no_booked_known`).
_GOT_FROM = {"capacity_block": (("aws",), "the capacity blocks on sale"),
             "reservation": (("aws", "gcp"), "the reservations held"),
             "flex_start": (("gcp",), "GCP's prices (flex-start's among them)")}
_ANSWER = ("`costsched prices import FILE` reads a saved `aws ec2 "
           "describe-capacity-block-offerings` answer")


def booked_line(c: Constraints, markets: str = "constraints.markets") -> str:
    """How to get offerings of the booked markets the job asks for, on the clouds it
    allows ('' when it asks for none, or allows none of their clouds); `markets`: the key
    its file writes them under (`no_plan_keys.key`)."""
    asked = [m for m in dict.fromkeys(c.markets) if m in BOOKED_MARKETS
             and any(not c.clouds or x in c.clouds for x in _GOT_FROM[m][0])]
    if not asked:
        return ""
    clouds = sorted({x for m in asked for x in _GOT_FROM[m][0] if not c.clouds or x in c.clouds})
    held = [m for m in asked if m != "flex_start"]
    command = collect_command(clouds, c.regions, sorted(c.gpu_models), booked=bool(held))
    got = [_GOT_FROM[m][1] for m in asked]
    said = f"`{command}` collects {', '.join(got[:-1])} and {got[-1]}" if len(got) > 1 \
        else f"`{command}` collects {got[0]}"
    if "capacity_block" in asked and "aws" in clouds:
        said += f" ({_ANSWER})"
    if held and not {"spot", "on_demand"} & set(c.markets):
        said += ("; plan weighs capacity blocks and reservations beside spot or on-demand, "
                 f"which {markets} leaves out")
    return said


def fetch_line(found: pd.DataFrame, job: Workload, cpu: bool, elsewhere: bool) -> str:
    """The `collect` line of a market with no price for the job's shape: of booked
    capacity where the job asks for that alone (`booked_line`), else of spot and
    on-demand (`collect_line`)."""
    c = job.job.constraints
    if only_booked(c):
        return booked_line(c, key(job, "markets"))
    return collect_line(found, c, cpu, elsewhere)


def only_booked(c: Constraints) -> bool:
    """Whether the job asks for booked capacity alone (its markets all booked ones)."""
    return bool(c.markets) and all(m in BOOKED_MARKETS for m in c.markets)
