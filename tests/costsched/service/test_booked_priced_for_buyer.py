"""The booked comparison is priced for the launcher that buys the block, whatever launcher
is configured: with the local one (whose restarts boot no instance) a plan and a
`launch --book` weigh the block against spot and on-demand with the figures they have on
aws, and the plan says for whom they are priced."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.model import InvalidInput
from costsched.optimize.booked import BookedPlans
from costsched.service import jobs as service
from costsched.service import plan
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.booked_world import NOW, job_spec, world


def _figures(plans: BookedPlans) -> dict[str, float]:
    """Every plan of the comparison by name, with its expected dollars."""
    found = [plans.on_demand, *([plans.spot] if plans.spot else []), *plans.booked]
    return {p.name: round(p.usd, 6) for p in found}


def _planned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launcher: str) -> BookedPlans:
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", launcher)
    folder = tmp_path / f"plan-{launcher}"
    folder.mkdir()
    store = world(PriceStore(f"sqlite:///{folder}/s.db"))
    try:
        result = plan(store, job_spec(folder), at=NOW)
    finally:
        store.dispose()
    (booked,) = result.booked
    assert booked is not None
    return booked


def test_a_plan_on_the_local_launcher_weighs_the_block_as_aws_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_aws = _planned(tmp_path, monkeypatch, "aws")
    on_local = _planned(tmp_path, monkeypatch, "local")
    # The spot plan, the on-demand plan and each block's plan, all priced as on aws: spot
    # with free restarts (the local launcher's) would cost less than on aws.
    assert on_aws.spot is not None and on_aws.spot.feasible
    assert _figures(on_local) == _figures(on_aws)
    assert on_local.best.name == on_aws.best.name and on_local.best.booked is not None
    assert on_local.saves_usd == pytest.approx(on_aws.saves_usd)
    # Said where the figures are not the configured launcher's, and only there.
    assert on_aws.priced_as == ""
    said = on_local.priced_as
    assert said.startswith("priced as on aws, the launcher that buys the capacity blocks: "
                           "restart 0.3611 h: 10 min boot and set-up ([migration] "
                           "restart_minutes) + 5 min warm-up"), said
    assert "50 GB checkpoint" in said, said


class _Local(FakeLauncher):
    """A launcher that runs its instances on this machine (so boots none), as local."""

    name = "local"


def _asked(tmp_path: Path, launcher: FakeLauncher) -> BookedPlans:
    """The plans `launch --book` on `launcher` asks the user about (answered no)."""
    folder = tmp_path / f"launch-{launcher.name}"
    folder.mkdir()
    store = world(PriceStore(f"sqlite:///{folder}/s.db"))
    asked: list[BookedPlans] = []
    try:
        with pytest.raises(InvalidInput, match="not booked: nothing bought"):
            service.launch(store, job_spec(folder), launcher=launcher, at=NOW,
                           book=lambda plans: asked.append(plans) and False,
                           checkpoint_root=str(folder / "ckpt"))
    finally:
        store.dispose()
    (plans,) = asked
    return plans


def test_a_booked_launch_on_the_local_launcher_is_priced_as_its_plan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_cloud = _asked(tmp_path, FakeLauncher())  # a launcher that boots an instance
    on_local = _asked(tmp_path, _Local())
    assert _figures(on_local) == _figures(on_cloud)
    assert on_local.best.booked is not None and on_local.best.name == on_cloud.best.name
    # and as `plan` prices it on the local launcher
    assert _figures(on_local) == _figures(_planned(tmp_path, monkeypatch, "local"))
