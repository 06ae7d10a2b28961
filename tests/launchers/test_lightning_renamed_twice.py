"""A Lightning-style job on this machine's disk, as a real process: each save writes
`epoch=E-step=S.ckpt` and `last.ckpt` as `.tmp` files renamed into place, removes the best
files past the top two (the new one too, once the loss levels off), then renames
`last.ckpt` in again with the best list. On ext4 the temporary file takes the inode number
the file it replaced gave back, so `last.ckpt` keeps its number across a save: its saves
are published all the same, at the pace of the looks, none torn, and nothing is said of a
file written in place."""

from __future__ import annotations

import logging
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

from launchers.checkpoints.local import LocalStore
from launchers.file_identity import birth, file_id
from launchers.publisher import Publisher

# The trial job's save, without numpy: the loss improves for three saves, then levels off
# (each new best file is removed at once, and the top two stay as they were).
WRITER = """
import os, pickle, sys, time
folder, saves, every = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
last = os.path.join(folder, "last.ckpt")
state = {"step": 0, "best": [], "weights": b"w" * 200_000}
for k in range(1, saves + 1):
    time.sleep(every)
    state["step"] = s = 150 * k
    name = f"epoch={s // 300}-step={s}.ckpt"
    data = pickle.dumps(state)
    for fn in (name, "last.ckpt"):
        tmp = os.path.join(folder, fn + ".tmp")
        open(tmp, "wb").write(data); os.replace(tmp, os.path.join(folder, fn))
    state["best"].append((1.0 / k if k <= 3 else 1.0, name)); state["best"].sort()
    for _, old in state["best"][2:]:
        os.remove(os.path.join(folder, old))
    state["best"] = state["best"][:2]
    open(last + ".tmp", "wb").write(pickle.dumps(state)); os.replace(last + ".tmp", last)
    print(os.stat(last).st_ino, flush=True)
"""


def versions(store: LocalStore, tmp_path: Path) -> list[int]:
    """The step of each version, each asserted whole: its best files are the ones its
    last.ckpt names, each one a whole pickle of its own step."""
    steps = []
    for checkpoint in store.list():
        into = tmp_path / f"v{checkpoint.version}"
        into.mkdir()
        for part in checkpoint.parts:
            store.fetch_part(part, into)
        last = pickle.loads((into / "last.ckpt").read_bytes())
        held = {p.name for p in checkpoint.parts if p.name != "last.ckpt"}
        assert held == {name for _, name in last["best"]}, (checkpoint.version, held, last)
        for name in held:
            assert pickle.loads((into / name).read_bytes())["step"] == int(
                name.split("=")[-1][:-5])
        steps.append(last["step"])
    return steps


def test_a_last_ckpt_renamed_in_under_its_own_inode_number_is_published_at_each_look(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="costsched.agent")
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    store = LocalStore(tmp_path / "store")
    publisher = Publisher(store, folder, keep=1000)
    saves = 16
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder), str(saves), "0.5"],
                              stdout=subprocess.PIPE, text=True)
    try:
        while writer.poll() is None:  # as the agent looks: every second, or when asked
            publisher.publish_changed()
            wait = 1.0
            if publisher.again_at is not None:
                wait = min(wait, max(publisher.again_at - time.monotonic(), 0.02))
            time.sleep(wait)
    finally:
        writer.kill()
        out, _ = writer.communicate()
    assert writer.returncode == 0
    inodes = out.split()
    assert len(inodes) == saves
    steps = versions(store, tmp_path)  # each asserted whole
    assert steps == sorted(steps) and len(steps) >= saves // 4, (steps, inodes)
    said = [r.getMessage() for r in caplog.records]
    assert not [s for s in said if "in place" in s or "inode" in s], said


def test_a_file_renamed_over_one_of_the_same_inode_number_is_another_file(
        tmp_path: Path) -> None:
    path = tmp_path / "last.ckpt"
    path.write_bytes(b"0")
    if birth(path) is None:
        pytest.skip("this filesystem keeps no birth time")
    seen = []
    for k in range(1, 6):  # each save renames twice: the numbers alternate between two
        for half in (b"a", b"b"):
            tmp = tmp_path / "last.ckpt.tmp"
            tmp.write_bytes(b"%d%s" % (k, half))
            tmp.replace(path)
        info = path.stat()
        seen.append((info.st_ino, file_id(path, info)))
    ids = [file for _, file in seen]
    if len({ino for ino, _ in seen}) == len(seen):
        pytest.skip("this filesystem gave every file a new inode number")
    assert len(set(ids)) == len(ids), seen  # the birth time tells them apart
