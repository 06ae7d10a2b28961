"""The setup an instance measured is kept with its placement's step readings, once: what
`report` puts a job's billed hours beyond its training down to (`JobStore.setups`), never
a setup it did not measure. A real job on the local launcher, looked after by passes."""

from __future__ import annotations

import sys

import yaml

from costsched.service import jobs as service
from tests.real_jobs import TRAIN, World, wait_for, world  # noqa: F401 - the fixture


def test_the_setup_its_instance_measured_is_kept_with_its_placement(world: World  # noqa: F811
                                                                    ) -> None:
    store, launcher, tmp = world
    path = tmp / "setup.yaml"
    path.write_text(yaml.safe_dump({
        "name": "setup", "throughputs": {"V100": 0.01}, "steps": 300,
        "setup": "sleep 0.6",
        "run": f"{sys.executable} {TRAIN} --steps 300 --step-seconds 0.01 "
               "--checkpoint-every 0.1",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))

    def ended() -> bool:
        service.reconcile(store, launcher)
        return store.jobs.get(job.id).state == "succeeded"

    wait_for(ended, 120, poll=0.2)
    [took] = store.jobs.setups([job.id])[job.id]
    assert took is not None and took >= 0.6
