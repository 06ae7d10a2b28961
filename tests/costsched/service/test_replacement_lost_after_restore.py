"""A replacement lost before it reported a step, once its status says the checkpoint it
restored (its command started, or its backend does not say whether it did): its recovery
says what it did there is lost, by how much not known, never 'no step lost' because the
checkpoint it restored is at the step the job stood at. Real local-launcher jobs, each
replacement taken away only once its status says its restored checkpoint's step (the
order a loaded machine gives: a quick preemption comes before that status)."""

from __future__ import annotations

from costsched.service import jobs as service
from costsched.service.jobs.resumed_words import unreported_words
from costsched.service.views import status_document
from tests.costsched.service.test_ran_not_known import unsaid  # noqa: F401 - a fixture
from tests.costsched.service.test_resume_at_zero import recovered_once
from tests.real_jobs import World, preempt, wait_for


def _lost_after_restore(world: World, ran: bool | None) -> tuple[list[str], str, float, int]:
    """The job checkpoints at step 50 and reports 67 on its first instance, which is taken
    away; its replacement, which reports nothing, is taken away once its status says the
    checkpoint it restored (and, `ran` True, that its command started): (the second pass's
    lines, the replacement, the step the job stood at, the job's id)."""
    store, launcher, _ = world
    job, second, stood = recovered_once(world)
    assert stood > 0, stood

    def restored() -> bool:
        seen = launcher.status(second)
        return seen.checkpoint_step is not None and seen.ran is ran

    wait_for(restored)
    assert launcher.status(second).checkpoint_step == stood
    assert launcher.status(second).step is None  # it reported nothing in its run
    preempt(launcher, second)
    return service.reconcile(store, launcher), second, stood, job.id


def _said_lost(world: World, lines: list[str], second: str, stood: float,
               job_id: int) -> None:
    store, launcher, _ = world
    said = unreported_words(stood, None)
    assert said.endswith("what it did since is lost; how much is not known "
                         "(it reported no step)"), said
    assert any(line.endswith(said) for line in lines), lines
    assert not any("no step lost" in line for line in lines), lines
    [after] = service.status(store, launcher, job_id)
    [doc] = status_document([after])
    assert after.recoveries == 2, doc
    assert doc["recovered"][-1]["said"] == f"instance {second} was preempted; the job {said}", doc


def test_a_replacement_whose_command_ran_says_its_work_lost(world: World) -> None:
    lines, second, stood, job_id = _lost_after_restore(world, ran=True)
    _said_lost(world, lines, second, stood, job_id)


def test_a_replacement_where_ran_is_not_known_says_its_work_lost(
        unsaid: World) -> None:  # noqa: F811
    lines, second, stood, job_id = _lost_after_restore(unsaid, ran=None)
    _said_lost(unsaid, lines, second, stood, job_id)
