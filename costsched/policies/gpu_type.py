"""+gpu-type: the lowest expected cost of the job among 1-GPU spot instances of any GPU
model in the job's region, chosen at the start."""

from __future__ import annotations

from costsched.policies.base import ChooseOnce, Scope


class GpuType(ChooseOnce):
    name = "gpu-type"
    description = "1-GPU spot instances of any GPU model in the home region, chosen at the start"
    scope = Scope(single_gpu=True)
