"""A supervisor's look for jobs left (it drops the secrets of the jobs that ended) and a
launch's handoff of its job's secrets run in threads of their own: a handoff that comes
while a look is under way, after its read of the running jobs, is kept, never dropped by
that look's older read."""

from __future__ import annotations

import threading

import pytest

from costsched import launch_secrets
from costsched.daemon import supervisor
from costsched.daemon.supervisor import Supervisor
from costsched.store import PriceStore
from costsched.store.leases import holder_name
from tests.costsched.daemon.test_supervisor import ON, now

VALUE = "hf_handed_over_value"
# How long the look waits, after its read, for a handoff to come before it drops what it
# did not see run: only how long the test gives the handoff to come between the two.
BETWEEN = 2.0


def test_a_handoff_during_a_look_keeps_its_secrets(store: PriceStore,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    job = store.jobs.create("train", {"spec": {"task": {"secrets": ["HF_TOKEN"]}},
                                      "launcher": "local"}, 100, at=now())
    s = Supervisor(store, ON, holder=holder_name(), idle_seconds=3600)
    read, handed = threading.Event(), threading.Event()
    real = supervisor.live_jobs

    def live_jobs(where: PriceStore) -> list[int]:
        if threading.current_thread() is not looking:
            return real(where)
        read.set()
        handed.wait(BETWEEN)
        return []  # read before the launch stored its job

    monkeypatch.setattr(supervisor, "live_jobs", live_jobs)
    looking = threading.Thread(target=s._end_when_idle)
    looking.start()
    assert read.wait(60)
    kept: list[list[int]] = []
    handing = threading.Thread(target=lambda: (kept.append(s.take_secrets(
        {job: {"HF_TOKEN": VALUE}})), handed.set()))
    handing.start()
    handing.join(60)
    looking.join(60)
    assert not handing.is_alive() and not looking.is_alive()
    assert kept == [[job]]
    assert launch_secrets.held_for(job) == {"HF_TOKEN": VALUE}
