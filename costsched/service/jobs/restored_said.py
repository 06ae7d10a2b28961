"""Where a job really resumed from, once its new instance says what its agent restored
(`Instance.restored`, `costsched.restored`). A recovery or a start says the step it
resumes from as it begins (`steps.resume_from`): the step of the newest checkpoint as known
then. The agent restores the newest version that verifies: where that one is damaged it
restores the one before, and a start after a stop may find a checkpoint newer than the
step kept at the stop. The first pass that reads what was restored corrects the words of
that recovery (its RECOVERY_NOTE) or start (its move's detail), the one fact `status`, its
--json, `logs`, the report and the dashboard read, and notes it once in the job's log
(RESTORED_NOTE): 'resumes from step 1,025 (the newer checkpoint at step 1,700 was damaged
and skipped): 675 steps lost'. The lost steps are what the move cost (`report`); no charge
changes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from costsched.migration.launcher import Instance
from costsched.model import RECOVERY_NOTE, lost_steps_said, steps_lost
from costsched.service.jobs.recovered import START_RESUMES, start_words
from costsched.service.jobs.resumed_words import resumed_words
from costsched.service.jobs.runs import JobEvent
from costsched.store import PriceStore
from costsched.store.moves import MoveRecord

# The job's log: a recovery's or start's words corrected from what its instance restored.
RESTORED_NOTE = "restored"
_FROM = re.compile(r"^resumes from (?:about )?step (\d[\d,]*) ")
_READING = re.compile(r"since its last reading at step (\d[\d,]*)\)")


def correct_resumes(store: PriceStore, instances: Mapping[int, Instance],
                    at: datetime) -> list[JobEvent]:
    """Of `instances` (by job id, each its running instance), those whose agent says what
    it restored: the words of the recovery or start that placed it, corrected where they
    say another step; a line for each corrected (none when already said so)."""
    said = {j: i for j, i in instances.items()
            if i.restored is not None and (i.restored.version is None
                                           or i.restored.step is not None)}
    if not said:
        return []
    moves = store.moves.of_jobs(list(said))
    placed = {j: m for j in said for m in moves.get(j, [])
              if m.target_instance == said[j].id and m.kind in ("recovery", "start")}
    notes = {e.id: e for e in store.jobs.event_rows(
        [j for j, m in placed.items() if m.kind == "recovery"], [RECOVERY_NOTE])}
    lines = []
    for job_id, move in placed.items():
        line = _correct(store, move, said[job_id], list(notes.values()), at)
        if line:
            lines.append(JobEvent(job_id, RESTORED_NOTE, line, level="warning"))
    return lines


def _correct(store: PriceStore, move: MoveRecord, instance: Instance, notes: list,
             at: datetime) -> str:
    """`move`'s words corrected from what `instance` restored; its line, '' when they say
    it already (or say no step: nothing to correct)."""
    if move.kind == "start":
        words = start_words(move)
        target, was = ("move", move.id), move.detail
    else:  # the newest note of its lost instance (a gang's node's words are its own)
        mine = [e for e in notes if e.job_id == move.job_id
                and lost_steps_said(str(e.detail))[0] == move.source_instance]
        if not mine:
            return ""
        words = lost_steps_said(str(mine[-1].detail))[1]
        target, was = ("event", mine[-1].id), str(mine[-1].detail)
    now = corrected(words, instance)
    if not now:
        return ""
    detail = (f"{START_RESUMES}: {now}" if move.kind == "start"
              else f"instance {move.source_instance}: {now}")
    what = "start" if move.kind == "start" else "recovery"
    note = (f"instance {instance.id} restored {_restored_words(instance)}; the {what} had "
            f"said: {words}")
    if not store.jobs.correct(move.job_id, target, was, detail, RESTORED_NOTE, note, at=at):
        return ""  # corrected by another pass first
    return f"{now} (its {what} had said step {_said_step(words):,.0f})"


def corrected(words: str, instance: Instance) -> str:
    """`words` ('resumes from step 1,700 (its checkpoint's): no step lost') as they are
    of the checkpoint `instance` restored ('resumes from step 1,025 (the newer checkpoint
    at step 1,700 was damaged and skipped): 675 steps lost'); '' where they say its step
    already, or say no step (its step not known)."""
    restored = instance.restored
    said = _said_step(words)
    if restored is None or said is None:
        return ""
    step = 0 if restored.version is None else restored.step
    if step is None or step == said:
        return ""
    reading = _READING.search(words)
    lost = steps_lost(words)
    # The last step read before: in the words (a floor's reading), else the step said plus
    # the steps they say were lost.
    reached = (float(reading.group(1).replace(",", "")) if reading is not None
               else said + (lost[0] if lost is not None else 0.0))
    return resumed_words(step, reached, exact=reading is None, inferred=restored.inferred,
                         why=skipped_words(restored.skipped))


def skipped_words(skipped: tuple) -> str:
    """'the newer checkpoint at step 1,700 was damaged and skipped' (of `skipped`,
    `costsched.restored.Skipped`, newest first: 'the newer checkpoints at step 1,700
    (damaged) and at step 1,650 (only a save in progress) were skipped'); '' for none."""
    from costsched.restored import DAMAGED

    def named(s) -> str:  # noqa: ANN001 - a Skipped
        return f"at step {s.step:,}" if s.step is not None else f"version {s.version}"

    if len(skipped) == 1:
        [one] = skipped
        return (f"the newer checkpoint {named(one)} " + (
            "was damaged and skipped" if one.why == DAMAGED
            else "held only a save in progress and was skipped"))
    each = [f"{named(s)} ({'damaged' if s.why == DAMAGED else 'only a save in progress'})"
            for s in skipped]
    return (f"the newer checkpoints {', '.join(each[:-1])} and {each[-1]} were skipped"
            if each else "")


def _restored_words(instance: Instance) -> str:
    restored = instance.restored
    if restored is None or restored.version is None:
        return "no checkpoint" + (f" ({skipped_words(restored.skipped)})"
                                  if restored is not None and restored.skipped else "")
    step = "" if restored.step is None else f" at step {restored.step:,}"
    why = skipped_words(restored.skipped)
    return f"checkpoint version {restored.version}{step}" + (f" ({why})" if why else "")


def _said_step(words: str) -> float | None:
    found = _FROM.search(words)
    return None if found is None else float(found.group(1).replace(",", ""))
