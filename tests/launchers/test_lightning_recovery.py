"""A real local-launcher job with a PyTorch-Lightning checkpoint folder: every 2 s its best
two as new files written in place (`epoch=E-step=S.ckpt`, the older best removed), then
`last.ckpt` written under a temporary name and renamed over the one before;
`hparams.yaml` written once and `metrics.csv` appended to every 0.5 s, in the same folder.
Its directory never settles; its saves are published as it runs all the same. Preempted
without notice, it resumes from a recent save (its third or later), whole: the best files
its last.ckpt names are there, each written through."""

from __future__ import annotations

from pathlib import Path

from tests.costsched.service.job_scripts import PREAMBLE
from tests.launchers.test_replaced_recovery import recovered_after_saves
from tests.real_jobs import a_world

EVERY = 200  # steps between saves: 2 s
JOB = PREAMBLE + f"""\
last, best = saved / "last.ckpt", []
step, whole = 0, None
if last.exists():
    step, _, named = last.read_text().partition(" best ")
    step, best = int(step), [n for n in named.split(",") if n]
    whole = all((saved / n).read_text() == "x" * 4000 + f" {{n}}" for n in best)
    whole = whole and sorted(p.name for p in saved.glob("epoch=*")) == sorted(best)
print("resumed from step", step, "whole" if whole else "torn" if whole is False else "",
      flush=True)
if not (saved / "hparams.yaml").exists():
    (saved / "hparams.yaml").write_text("lr: 0.05\\n")
while True:
    time.sleep(0.1)
    step += 10
    report(step)
    if step % 50 == 0:
        with open(saved / "metrics.csv", "a") as log:
            log.write(f"{{step}},0.5\\n")
    if step % {EVERY} == 0:
        name = f"epoch={{step // 1000}}-step={{step}}.ckpt"
        with open(saved / name, "w") as out:  # in place, as Lightning writes its best
            out.write("x" * 4000)
            out.flush()
            out.write(f" {{name}}")
        best.append(name)
        while len(best) > 2:
            (saved / best.pop(0)).unlink()
        (saved / "last.ckpt.tmp").write_text(f"{{step}} best " + ",".join(best))
        os.replace(saved / "last.ckpt.tmp", last)
"""


def test_a_lightning_folder_preempted_without_notice_resumes_from_a_recent_save(
        tmp_path: Path) -> None:
    with a_world(tmp_path, poll_seconds=3.0) as world:
        # its fifth save published while it runs, with nothing said against it
        recovered, lines, resumed = recovered_after_saves(world, JOB, 5 * EVERY)
        assert recovered >= 3 * EVERY, lines
        step = int(resumed.group(1))
        assert step >= 3 * EVERY and step % EVERY == 0, resumed.group(0)
        assert resumed.group(2) == "whole", resumed.group(0)
