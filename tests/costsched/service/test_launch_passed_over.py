"""A launch keeps with the job a line for each `ordered:` alternative it passes over, with
why, as `plan` says it: here the launcher's, which does not start the first alternative's
offerings (A100:1 comes on gcp alone; this launcher starts aws offerings only)."""

from __future__ import annotations

from pathlib import Path

from costsched.model import Offering
from costsched.service import jobs as service
from costsched.service.jobs.launches import PASSED_OVER
from costsched.store import PriceStore
from launchers.local import LocalLauncher

TASK = """\
name: ord
run: "true"
resources:
  ordered:
    - {accelerators: A100:1}
    - {accelerators: V100:1, cloud: aws}
"""


class AwsOnly(LocalLauncher):
    """The local launcher, starting aws offerings only (as a cloud's launcher starts its
    own cloud's)."""

    def can_launch(self, offering: Offering) -> bool:
        return offering.cloud == "aws"


def test_a_launch_keeps_the_alternatives_its_launcher_passes_over(tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(TASK)
    store = PriceStore(str(tmp_path / "s.sqlite"))
    try:
        [record] = service.launch(store, [str(path)], launcher=AwsOnly(tmp_path / "instances"))
        assert record.spec[PASSED_OVER] == [
            "ordered: alternative 1 (A100:1 on-demand): launch cannot start it: the local "
            "launcher does not launch gcp offerings; passed over: the order holds for the "
            "rest (alternative 2 first)"]
        placed = store.jobs.placements()
        assert list(placed["cloud"]) == ["aws"] and list(placed["gpu_model"]) == ["V100"]
        # A launcher that starts any offering takes the first alternative: none passed over.
        path.write_text(TASK.replace("name: ord", "name: ord-any"))
        [record] = service.launch(store, [str(path)], launcher=LocalLauncher(
            tmp_path / "instances"))
        assert PASSED_OVER not in record.spec
        assert store.jobs.placements()["gpu_model"].tolist() == ["V100", "A100"]
    finally:
        store.dispose()
