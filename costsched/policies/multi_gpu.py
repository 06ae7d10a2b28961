"""+multi-gpu: also multi-GPU instances, compared by the job's expected cost at the
instance's throughput at its GPU count (the throughput table's multi-GPU entries, else its
stated data-parallel scaling rule)."""

from __future__ import annotations

from costsched.policies.base import ChooseOnce, Scope


class MultiGpu(ChooseOnce):
    name = "multi-gpu"
    description = "spot instances with any number of GPUs in the home region, chosen at the start"
    scope = Scope(single_gpu=False)
