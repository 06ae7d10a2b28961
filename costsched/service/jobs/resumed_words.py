"""The words of the step a job resumes from and the steps it lost there, as every recovery
says them: a single job's after a preemption (`steps.resume_from`), a gang's after a node
replaced in place (`gangs.keep`)."""

from __future__ import annotations

from costsched.vocabulary import counted

# What a step read off the time its checkpoint was saved is said with (`resumed_words`),
# and what tells such words apart (`inferred`): its --json says so.
READ_OFF_TIME = "read off the time it was saved"
# Where a job resumes from, said of the checkpoint it restored.
ITS_CHECKPOINTS = "its checkpoint's"
# Where a job that published no checkpoint starts again from, in its hints to start it.
FROM_NO_CHECKPOINT = "from step 0: it published no checkpoint"


def resumes_from_checkpoint(step: float) -> bool:
    """Whether a checkpoint at `step` is one a move or recovery resumes from: its step
    above 0. A version at step 0 (files written before the first step, as a job's
    hyperparameters or a log's header) resumes from the start, as none would. The one rule
    for a recovery's words, `migrate`'s lost work and `status`'s start hints."""
    return step > 0


def resumed_words(saved: float, reached: float, exact: bool, inferred: bool = False,
                  why: str = "") -> str:
    """'resumes from step 300 (its checkpoint's): 94 steps lost' (`saved`: the step of the
    checkpoint it resumes from, 0 with none; `reached`: the last step read before); 'no
    step lost' after a checkpoint at its last step (a notice's, a stop's, a gang's pause)
    or before its first step. `exact`: the last step read is the last it made (an instance
    on this machine, whose progress file outlives it), else a floor: 'at least 94 steps
    lost (since its last reading at step 394)'. `inferred`: the checkpoint's step is the
    one the job had reported by the time it was saved (neither its marker's nor its files'
    names say it), a floor of the step it saved: 'resumes from about step 398 (its
    checkpoint's, read off the time it was saved): about 187 steps lost' (a floor of the
    step saved against one of the step reached: about, never at least); a checkpoint at or
    past the last step read lost none all the same. `why`: why it resumes from that
    checkpoint, not a newer one, said in its place ('the newer checkpoint at step 1,700 was
    damaged and skipped': `restored_said`)."""
    lost = reached - saved
    kept = resumes_from_checkpoint(saved)
    if lost <= 0:
        return (f"resumes from step {saved:,.0f} ({why or ITS_CHECKPOINTS}): no step lost"
                if kept else f"resumes from step 0 ({why or 'no checkpoint yet'}): no step lost")
    where = why or (ITS_CHECKPOINTS if kept else "no checkpoint: from the start")
    about = "about " if inferred and kept else ""
    if about:
        where = f"{where}, {READ_OFF_TIME}"
    said = f"{about}{counted(round(lost), 'step')} lost"
    if not exact:  # its instance is gone: it trained on after the reading
        said = f"{'' if about else 'at least '}{said} (since its last reading at step " \
               f"{reached:,.0f})"
    return f"resumes from {about}step {saved:,.0f} ({where}): {said}"


# Where a job that reports no step is told how costsched learns the step it saved.
STEP_DOC = "docs/checkpoints.md#a-job-that-reports-no-step"


def unknown_step_words(version: int) -> str:
    """A job that reports no step resumes from checkpoint version `version`, whose step
    neither its commit marker nor its files' names give: what is known, never a step or
    a loss costsched cannot count."""
    return (f"resumes from its newest checkpoint (version {version}; its step is not known: "
            f"the job reports no step, see {STEP_DOC})")


def unsaid_step_words(version: int, said_version: int, said_step: float) -> str:
    """A job resumes from checkpoint version `version`, published after the one whose step
    its lost instance said last (`said_version`, at `said_step`), with no step kept with it:
    what is known, never the older version's step as if it were this one's."""
    return (f"resumes from its newest checkpoint (version {version}; its step is not known: "
            f"its instance last said version {said_version}'s, step {said_step:,.0f})")


def nothing_saved_words() -> str:
    """A job that reports no step, published no checkpoint and ran its command, resumes
    from step 0: what it did is lost, by how much not known."""
    return ("resumes from step 0 (no checkpoint yet): what it did since it started is lost; "
            "how much is not known (it reports no step)")


def may_have_run(ran: bool | None) -> bool:
    """Whether what an instance's command did may be lost with it: its command started
    (`ran`), or its backend does not say whether it did (None, as a cloud's instance):
    then its work is said lost, by how much not known, never "no step lost". The one rule
    for every recovery's words (`steps.resume_from`, `unreported_words`)."""
    return ran is not False


def unreported_words(steps_done: float, ran: bool | None) -> str:
    """An instance lost before it reported a step, whose job resumes where it stood
    (`steps_done`, its newest checkpoint's): no step lost where its command had not
    started (`ran` False); else (it ran, or whether it did is not known: `may_have_run`)
    what it did there is lost, by how much not known."""
    lost = ("what it did since is lost; how much is not known (it reported no step)"
            if may_have_run(ran) else "no step lost (its command had not started)")
    return f"resumes from step {steps_done:,.0f} (its newest checkpoint's, as before it): {lost}"


def inferred(words: str) -> bool:
    """Whether `resumed_words`' words (a recovery note's) say a step read off the time its
    checkpoint was saved."""
    return READ_OFF_TIME in words
