"""+multi-cloud: also every region of the other clouds, chosen once at the start."""

from __future__ import annotations

from costsched.policies.base import ChooseOnce, Scope

MULTI_CLOUD = Scope(single_gpu=False, other_clouds=True)


class MultiCloud(ChooseOnce):
    name = "multi-cloud"
    description = ("spot instances with any number of GPUs, home region or any region of "
                   "another cloud, chosen at the start")
    scope = MULTI_CLOUD
