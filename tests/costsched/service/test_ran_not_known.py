"""A backend that does not say whether a job's command started on an instance (a cloud's:
`Instance.ran` None) is taken to have run it: a recovery of an instance lost before it
reported a step says what it did there is lost, by how much not known, never "no step
lost". One rule (`resumed_words.may_have_run`) for the step-0 words and the words of a
replacement lost after its job had reported steps. Real local-launcher jobs, their
launcher made to say nothing of `ran`, preempted without notice."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from costsched.migration.launcher import Instance
from costsched.service import jobs as service
from costsched.service.jobs.resumed_words import may_have_run, unreported_words
from costsched.service.views import status_document
from launchers.local import LocalLauncher
from tests.costsched.service.test_resume_at_zero import SILENT, recovered_once
from tests.real_jobs import POLL, World, a_world, launch, preempt


class Unsaid(LocalLauncher):
    """The local launcher, saying of no instance whether its command started, as a
    cloud's does not."""

    def status(self, instance_id: str) -> Instance:
        return replace(super().status(instance_id), ran=None)

    def statuses(self, instance_ids):  # noqa: ANN001, ANN201
        return {i: replace(s, ran=None) for i, s in super().statuses(instance_ids).items()}


@pytest.fixture()
def unsaid(tmp_path: Path) -> Iterator[World]:
    with a_world(tmp_path) as (store, local, tmp):
        launcher = Unsaid(local.base_dir, grace_seconds=local.grace_seconds,
                          poll_seconds=POLL)
        yield store, launcher, tmp
        for instance in launcher.instances():
            launcher.terminate(instance.id)


LOST = "what it did since is lost; how much is not known (it reported no step)"


def test_not_known_is_taken_as_ran_and_only_false_says_none_lost() -> None:
    assert may_have_run(True) and may_have_run(None) and not may_have_run(False)
    assert unreported_words(50, None) == unreported_words(50, True) == (
        f"resumes from step 50 (its newest checkpoint's, as before it): {LOST}")
    assert unreported_words(50, False).endswith("no step lost (its command had not started)")


def test_a_job_lost_before_its_first_step_where_ran_is_not_known(unsaid: World) -> None:
    store, launcher, _ = unsaid
    job, instance = launch(unsaid, SILENT, name="silent.py")
    assert launcher.status(instance).ran is None
    preempt(launcher, instance)
    lines = service.reconcile(store, launcher)
    said = ("resumes from step 0 (no checkpoint yet): what it did since it started is lost; "
            "how much is not known (it reports no step)")
    assert any(line.endswith(said) for line in lines), lines
    assert not any("no step lost" in line for line in lines), lines


def test_a_replacement_lost_where_ran_is_not_known_says_its_work_lost(
        unsaid: World) -> None:
    """The job reported steps and saved at step 50 on its first instance; its replacement,
    lost before it reported a step, is said to have lost what it did there."""
    store, launcher, _ = unsaid
    job, second, step = recovered_once(unsaid)
    preempt(launcher, second)
    lines = service.reconcile(store, launcher)
    said = f"resumes from step {step:,.0f} (its newest checkpoint's, as before it): {LOST}"
    assert any(line.endswith(said) for line in lines), lines
    assert not any("no step lost" in line for line in lines), lines
    [after] = service.status(store, launcher, job.id)
    [doc] = status_document([after])
    assert doc["recovered"][-1]["said"] == f"instance {second} was preempted; the job {said}", doc
