"""A real local-launcher job laid out as a ported training script is: a log appended to at the
top of its checkpoint directory (`progress.jsonl`, every 0.75 s) and, in a subfolder, a new
pickle at each save (every second, slower than the agent's look), then a `latest` link
moved to it, then older pickles removed (the newest 2 kept). Its saves are published while
it runs; preempted without notice after its second save, it resumes from the newest
published save through the restored link, and the recovery says that step."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
from launchers.checkpoint_links import LINKS
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import checkpoints_of, instance_of, launch, preempt, wait_for

JOB = PREAMBLE + """\
import json, pickle
ck = saved / "checkpoints"
ck.mkdir(exist_ok=True)
latest = ck / "latest"
step = pickle.loads(latest.read_bytes())["step"] if latest.exists() else 0
print("resumed from step", step, "via", os.readlink(latest) if latest.is_symlink() else None,
      flush=True)
ticks = 0
while True:
    time.sleep(0.25)
    ticks += 1
    step += 100
    report(step)
    if ticks % 3 == 0:
        with open(saved / "progress.jsonl", "a") as log:
            log.write(json.dumps({"step": step}) + "\\n")
    if ticks % 4 == 0:
        name = f"ckpt-{step:06d}.pkl"
        (ck / f"{name}.tmp").write_bytes(pickle.dumps({"step": step, "w": os.urandom(500)}))
        os.replace(ck / f"{name}.tmp", ck / name)
        (ck / "latest.tmp-link").unlink(missing_ok=True)
        os.symlink(name, ck / "latest.tmp-link")
        os.replace(ck / "latest.tmp-link", latest)
        for old in sorted(ck.glob("ckpt-*.pkl"))[:-2]:
            old.unlink()
"""


def newest(checkpoints, peek: Path) -> tuple[int, int]:  # noqa: ANN001
    """(the pickles the newest verified version holds, the step its `latest` leads to)."""
    found = checkpoints.newest_verified()
    if found is None or found.part(LINKS) is None:
        return 0, 0
    pickles = [p for p in found.parts if p.name.startswith("checkpoints/ckpt-")]
    where = checkpoints.fetch_part(found.part(LINKS), peek)
    target = json.loads(where.read_text())["checkpoints/latest"]
    return len(pickles), int(target[5:11])


def test_a_ported_job_with_a_log_and_a_latest_link_resumes_from_its_newest_save(
        world, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, instance = launch(world, JOB)
    checkpoints = checkpoints_of(store, job.id)
    wait_for(lambda: newest(checkpoints, tmp / "peek")[0] >= 2)  # its 2nd save, as it runs
    # and its instance says it (a preemption between a publish and the agent's next word
    # would leave the recovery the step of the version before)
    wait_for(lambda: (launcher.status(instance).checkpoint_step or 0) >= 800)

    preempt(launcher, instance)
    saved = newest(checkpoints, tmp / "peek")[1]  # the newest published (a third, maybe)
    assert saved >= 800
    lines = service.reconcile(store, launcher)
    words = re.compile(rf"resumes from (about )?step {saved:,} \(its checkpoint's")
    assert any(words.search(line) for line in lines), (saved, lines)
    now = instance_of(store, job.id)
    assert now != instance
    said = wait_for(lambda: re.search(r"resumed from step (\d+) via (\S+)",
                                      launcher.logs(now, tail=20)))
    assert int(said.group(1)) == saved and said.group(2) == f"ckpt-{saved:06d}.pkl", \
        said.group(0)
    [after] = service.status(store, launcher, job.id)
    print_status([after], json_out=False)
    assert words.search(" ".join(capsys.readouterr().out.split()))
