"""static: the 1xV100 spot instance in the job's region with the lowest expected cost at
the start (one GPU model and cloud: the cheapest instance), kept."""

from __future__ import annotations

from costsched.policies.base import ChooseOnce, Scope


class Static(ChooseOnce):
    name = "static"
    description = "cheapest 1xV100 spot instance in the home region, chosen at the start"
    scope = Scope(gpu_model="V100", single_gpu=True)
