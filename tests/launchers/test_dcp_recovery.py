"""A real local-launcher job that checkpoints the way PyTorch distributed checkpoint (DCP)
does, with numpy: each save's tensors written to `step_<n>/__0_0.distcp`, then its
metadata written as `step_<n>/.metadata.tmp` and renamed to `.metadata` (the rename is the
commit; `dcp.load` reads `.metadata` first). It resumes only from a folder holding
`.metadata`. Preempted without notice after its commit of step 400, the recovery restores
that folder with its `.metadata` and says step 400; no version holds `.metadata.tmp`.
Preempted in the middle of its save of 600 (its data written, its metadata not), the
recovery says step 400 too, where the job resumes, with the steps lost since: no version
holds the save cut short."""

from __future__ import annotations

import re
from pathlib import Path

from costsched.service import jobs as service
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import a_world, checkpoints_of, instance_of, launch, preempt, wait_for

EVERY = 200  # steps between saves: 2 s
JOB = PREAMBLE + f"""\
import pickle, shutil
import numpy as np
def committed():
    return sorted(int(p.name[5:]) for p in saved.glob("step_*")
                  if p.name[5:].isdigit() and (p / ".metadata").is_file())
step, whole = 0, None
if committed():
    step = committed()[-1]
    meta = pickle.loads((saved / f"step_{{step}}" / ".metadata").read_bytes())
    with open(saved / f"step_{{step}}" / meta["files"][0], "rb") as handle:
        weights = np.load(handle)
    whole = meta["step"] == step and bool((weights == step).all())
listing = sorted(p.relative_to(saved).as_posix() for p in saved.rglob("*") if p.is_file())
print("resumed from step", step, "whole" if whole else "torn" if whole is False else "",
      "listing", listing, flush=True)
first_run = step == 0
cut = sys.argv[1:] == ["cut"]  # its first run's save of 600 never commits
while True:
    time.sleep(0.1)
    step += 10
    report(step)
    # the first run saves twice (200, 400), then trains on without saving until preempted
    # (or begins its save of 600 and never ends it)
    if step % {EVERY} == 0 and not (first_run and step > (3 if cut else 2) * {EVERY}):
        folder = saved / f"step_{{step}}"
        folder.mkdir(exist_ok=True)
        with open(folder / "__0_0.distcp", "wb") as handle:  # written in place, as DCP does
            np.save(handle, np.full(1000, step, dtype=np.int64))
        if first_run and cut and step == 3 * {EVERY}:
            continue  # preempted before it writes its metadata
        (folder / ".metadata.tmp").write_bytes(
            pickle.dumps({{"step": step, "files": ["__0_0.distcp"]}}))
        os.rename(folder / ".metadata.tmp", folder / ".metadata")
        for old in committed()[:-2]:
            shutil.rmtree(saved / f"step_{{old}}")
"""


def names_in(store, job_id: int) -> set[str]:  # noqa: ANN001
    """Every file name of every version in the job's checkpoint store."""
    return {p.name for c in checkpoints_of(store, job_id).list() for p in c.parts}


def test_a_dcp_job_preempted_after_a_commit_resumes_from_it_with_its_metadata(
        tmp_path: Path) -> None:
    with a_world(tmp_path) as world:
        store, launcher, _ = world
        job, instance = launch(world, JOB)
        # its commits of 200 and 400 published, then it trains on past them
        wait_for(lambda: (launcher.status(instance).step or 0) >= 2 * EVERY + 200)
        wait_for(lambda: launcher.status(instance).checkpoint_step == 2 * EVERY)
        assert launcher.status(instance).checkpoint_error == ""
        names = names_in(store, job.id)
        assert {"step_400/.metadata", "step_400/__0_0.distcp"} <= names, names
        assert not any(".metadata.tmp" in n for n in names), names

        preempt(launcher, instance)
        lines = service.reconcile(store, launcher)
        said = [line for line in lines if "resumes from" in line]
        assert len(said) == 1, lines
        assert re.search(r"resumes from step 400 \(its checkpoint's\)", said[0]), said[0]
        assert "no step lost" not in said[0]

        now = instance_of(store, job.id)
        assert now != instance
        resumed = wait_for(lambda: re.search(r"resumed from step (\d+) (\w*) listing (.*)",
                                             launcher.logs(now, tail=20)))
        assert resumed.group(1, 2) == ("400", "whole"), resumed.group(0)
        assert "'step_400/.metadata'" in resumed.group(3), resumed.group(0)
        assert ".metadata.tmp" not in resumed.group(3), resumed.group(0)

        # it saves 600 on its new instance: published with its metadata
        wait_for(lambda: (launcher.status(now).checkpoint_step or 0) >= 3 * EVERY)
        assert "step_600/.metadata" in names_in(store, job.id)


def test_a_dcp_job_preempted_before_its_save_commits_resumes_from_the_last_commit(
        tmp_path: Path) -> None:
    with a_world(tmp_path) as world:
        store, launcher, _ = world
        job, instance = launch(world, JOB, "cut")
        # its save of 600 written but for its metadata, a look or two ago at least
        wait_for(lambda: (launcher.status(instance).step or 0) >= 3 * EVERY + 200)
        status = launcher.status(instance)
        assert status.checkpoint_step == 2 * EVERY, status
        assert not any(n.startswith("step_600/") for n in names_in(store, job.id))

        preempt(launcher, instance)
        lines = service.reconcile(store, launcher)
        said = [line for line in lines if "resumes from" in line]
        assert len(said) == 1, lines
        lost = re.search(r"resumes from step 400 \(its checkpoint's\): (?:at least )?"
                         r"([\d,]+) steps? lost", said[0])
        assert lost, said[0]
        assert int(lost.group(1).replace(",", "")) >= 400, said[0]

        now = instance_of(store, job.id)
        resumed = wait_for(lambda: re.search(r"resumed from step (\d+) (\w*) listing (.*)",
                                             launcher.logs(now, tail=20)))
        assert resumed.group(1, 2) == ("400", "whole"), resumed.group(0)
        assert "step_600" not in resumed.group(3), resumed.group(0)
