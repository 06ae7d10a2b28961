"""A job whose checkpoint keeps files in subfolders (HF Trainer's `checkpoint-500/`, a
`latest/state.json`), run by the local launcher and committing each save with the marker:
after a preemption without notice, its next instance starts with every file of the newest
version in its subfolder, byte for byte, and never with files of two different saves."""

from __future__ import annotations

import sys
from pathlib import Path

from launchers.checkpoints import open_store
from launchers.local import LocalLauncher
from tests.launchers.test_local import OFFERING, spec, wait_for

JOB = """
import hashlib, json, os, pathlib, time
here = pathlib.Path(os.environ["COSTSCHED_CHECKPOINT_DIR"])
def files():
    return sorted(p.relative_to(here).as_posix() for p in here.rglob("*")
                  if p.is_file() and not p.name.startswith("."))
print("restored:", files(), flush=True)
for name in files():
    print("sha", name, hashlib.sha256((here / name).read_bytes()).hexdigest(), flush=True)
def save(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_name(path.name + ".tmp").write_text(text)
    os.replace(path.with_name(path.name + ".tmp"), path)
state = here / "latest" / "state.json"
step = json.loads(state.read_text())["step"] if state.exists() else 0
top = int((here / "top.txt").read_text()) if (here / "top.txt").exists() else 0
print("resumed from step", step, "top", top, flush=True)
(here / "COSTSCHED_COMMIT").touch()  # at the start too: no save is taken before its commit
if not (here / "vocab" / "words.txt").exists():
    save(here / "vocab" / "words.txt", "the a of\\n" * 1000)
while True:
    step += 1
    save(state, json.dumps({"step": step}))
    time.sleep(0.03)  # a second file of the same save, written a little later
    save(here / "top.txt", str(step))
    (here / "COSTSCHED_COMMIT").touch()  # the save is whole
    time.sleep(0.05)
"""

NAMES = ["COSTSCHED_COMMIT", "latest/state.json", "top.txt", "vocab/words.txt"]


def test_a_recovery_restores_the_subfolders_byte_for_byte(tmp_path: Path) -> None:
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)
    (tmp_path / "job.py").write_text(JOB)
    command = f"{sys.executable} {tmp_path / 'job.py'}"
    store = open_store(str(tmp_path / "store"))
    first = launcher.launch(spec(tmp_path, "a1", command, offering=OFFERING))
    try:
        wait_for(lambda: len(store.list()) >= 3)
    finally:
        launcher.preempt(first.id)  # no notice: no last checkpoint on the way out

    newest = store.newest_verified()
    assert newest is not None
    assert sorted(p.name for p in newest.parts) == NAMES
    for version in store.list():  # every version holds one save: state and top agree
        got = tmp_path / f"v{version.version}"
        store.fetch(version, got)
        top, state = got / "top.txt", got / "latest" / "state.json"
        if not top.exists():  # the job's first commit, before its first save (the marker
            # and a file written within the same clock tick read as one set): no half save
            assert not state.exists(), sorted(p.name for p in version.parts)
            continue
        assert top.read_text() in state.read_text()

    second = launcher.launch(spec(tmp_path, "a2", command, offering=OFFERING))
    try:
        wait_for(lambda: "resumed from step" in launcher.logs(second.id))
        log = launcher.logs(second.id)
    finally:
        launcher.terminate(second.id)
    assert f"restored: {NAMES}" in log
    for part in newest.parts:
        assert f"sha {part.name} {part.sha256}" in log
    resumed = log.split("resumed from step ")[1].split()
    assert int(resumed[0]) > 0 and resumed[0] == resumed[2], resumed  # state and top agree


LAST = """
import os, pathlib, signal, sys, time
here = pathlib.Path(os.environ["COSTSCHED_CHECKPOINT_DIR"])
step, stop = 0, []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
def save(name, text):
    (here / (name + ".tmp")).write_text(text)
    os.replace(here / (name + ".tmp"), here / name)
print("running", flush=True)
while True:
    step += 1
    save("weights.txt", str(step))
    time.sleep(0.2 if stop else 0.01)  # the second file of a save comes later
    save("optim.txt", str(step))
    if stop:
        print("saved", step, flush=True)
        sys.exit(0)
"""


def test_a_stopped_job_s_last_save_is_published_at_once(tmp_path: Path) -> None:
    """Saves every few hundredths of a second never leave the directory unchanged for the
    settle period; the save the job writes on SIGTERM is published once it has exited."""
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=10, poll_seconds=0.1)
    (tmp_path / "job.py").write_text(LAST)
    store = open_store(str(tmp_path / "store"))
    instance = launcher.launch(spec(tmp_path, "a1", f"{sys.executable} {tmp_path / 'job.py'}",
                                    offering=OFFERING))
    wait_for(lambda: "running" in launcher.logs(instance.id))
    launcher.notice(instance.id)

    saved = launcher.logs(instance.id).split("saved ")[1].split()[0]
    newest = store.newest_verified()
    assert newest is not None
    store.fetch(newest, tmp_path / "last")
    assert (tmp_path / "last" / "weights.txt").read_text() == saved
    assert (tmp_path / "last" / "optim.txt").read_text() == saved
