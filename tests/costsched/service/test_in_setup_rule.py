"""One rule for a job in setup: an instance whose command has not begun and whose setup
has not ended is 'in setup', whether its setup has begun (it says since when) or it still
boots before it; never 'no step yet' beside a sibling launched the same way."""

from __future__ import annotations

from datetime import datetime, timezone

from costsched.migration.launcher import Instance
from costsched.service.setup_phase import IN_SETUP, in_setup
from costsched.service.views import job_progress

KEY = ("aws", "us-west-2", "us-west-2a", "g4dn.xlarge", "spot", "linux")


def _instance(**fields: object) -> Instance:
    return Instance(id="i-1", job_id=1, attempt="a", offering_key=KEY,  # type: ignore[arg-type]
                    **{"state": "running", **fields})


def test_an_instance_before_its_setup_began_is_in_setup() -> None:
    assert in_setup(_instance(ran=False))  # booting: no setup_since yet
    assert in_setup(_instance(ran=False, setup_since=datetime.now(timezone.utc)))


def test_past_setup_or_not_said_is_not_in_setup() -> None:
    assert not in_setup(_instance(ran=True))  # its command runs
    assert not in_setup(_instance(ran=False, setup_seconds=4.0))  # setup ended
    assert not in_setup(_instance(ran=None))  # its backend does not say
    assert not in_setup(_instance(ran=False, state="preempted"))
    assert not in_setup(None)


def test_every_view_reads_the_rule_s_answer() -> None:
    job = {"state": "running", "progress": None, "progress_source": None, "step": 0,
           "setup_since": None}
    assert job_progress({**job, "in_setup": True}) == IN_SETUP
    assert job_progress({**job, "in_setup": False}) == "no step yet"
