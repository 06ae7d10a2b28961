"""A plan made with a cloud launcher configured whose account is not set up on this
machine still plans: the launcher that cannot be made leaves out what launch would place,
and the plan's note says why launch cannot launch now, as for every cloud."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.model import InvalidInput

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "resnet50-anywhere.yaml"
LOGIN = "gcp: no Google credentials found: run `gcloud auth application-default login`"


@pytest.mark.parametrize("launcher", ["aws", "gcp", "azure"])
def test_a_plan_with_a_launcher_not_set_up_plans(launcher: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import costsched.clouds.gcp as gcp

    def no_login(project: str | None = None) -> None:
        raise gcp.NoCredentials(LOGIN)

    monkeypatch.setattr(gcp, "credentials_and_project", no_login)
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", launcher)
    result = CliRunner().invoke(app, ["plan", str(EXAMPLE)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert f"launch cannot launch now: your launcher (launch.launcher) is {launcher}" \
        in result.output
    assert "resnet50" in result.stdout  # the plan's table


def test_launch_placements_of_a_launcher_not_made_are_none(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import launchers
    from costsched.service import launch_place

    def not_made(name: str) -> None:
        raise InvalidInput(LOGIN)  # as make_launcher says a cloud not set up

    monkeypatch.setattr(launchers, "make_launcher", not_made)
    monkeypatch.setattr(launch_place, "uses_deadline_policy", lambda job: True)
    assert launch_place.launch_placements(None, [object()], None, "gcp") == ()  # type: ignore[arg-type]
