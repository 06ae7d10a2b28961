"""static: the job's accelerator and count (default 1xV100) on the spot market (or the
job's markets) in its home region, the offering of the lowest expected cost at the start,
kept. Every other choice the job's constraints bind (clouds, zones, instance types)."""

from __future__ import annotations

from costsched.policies.base import ChooseOnce
from costsched.policies.cheapest_hourly import AskedFor


class Static(ChooseOnce):
    name = "static"
    description = ("the job's accelerator and count (default 1xV100 spot) in its home "
                   "region, the lowest expected cost at the start, kept")
    scope = AskedFor(home_only=True)
