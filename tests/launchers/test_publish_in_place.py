"""One checkpoint file the job rewrites in place (`torch.save(model, "last.pt")` on a slow
disk): never published half written, by a real writer as by looks a test times."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from launchers.checkpoints.local import LocalStore
from launchers.publisher import Publisher
from tests.launchers.test_publish_whole import Clock, sets

# Each save rewrites last.pt in place in chunks (BEGIN n, six lines, END n), then idles
# longer than the settle period the test gives the publisher.
WRITER = """
import sys, time
path, saves, pause, idle = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
for step in range(1, saves + 1):
    with open(path, "w") as f:
        f.write(f"BEGIN {step}\\n"); f.flush()
        for _ in range(6):
            f.write("x" * 1000 + "\\n"); f.flush(); time.sleep(pause)
        f.write(f"END {step}\\n")
    time.sleep(idle)
"""


def whole(text: str) -> bool:
    lines = text.splitlines()
    return len(lines) == 8 and lines[0].startswith("BEGIN ") \
        and lines[-1] == "END " + lines[0].split()[1]


def test_a_file_a_job_rewrites_in_place_is_never_published_torn(tmp_path: Path) -> None:
    folder = tmp_path / "work" / "checkpoints"
    folder.mkdir(parents=True)
    store = LocalStore(tmp_path / "store")
    publisher = Publisher(store, folder, settle=0.8)
    # the job's first save, seen whole by two looks (a file first seen half written and
    # still at the next look is taken: looks are spaced wider than a save's pauses)
    (folder / "last.pt").write_text("BEGIN 0\n" + ("x" * 1000 + "\n") * 6 + "END 0\n")
    publisher.publish_changed()
    publisher.publish_changed()
    assert len(store.list()) == 1
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder / "last.pt"), "2",
                               "0.03", "1.2"])
    try:
        while writer.poll() is None:
            publisher.publish_changed()
            time.sleep(0.02)
    finally:
        writer.kill()
        writer.wait()
    assert writer.returncode == 0
    versions = [v["last.pt"] for v in sets(store, tmp_path)]
    assert len(versions) > 1, "nothing published while the writer idled past the settle period"
    assert all(whole(text) for text in versions), [t.splitlines()[::7] for t in versions]


def write_in_place(path: Path, text: str, at: float) -> None:
    """`text` written over `path` (its inode kept), its modification time `at`."""
    with path.open("r+" if path.exists() else "w") as f:
        f.truncate(0)
        f.write(text)
    ns = int((1_700_000_000 + at) * 1e9)
    os.utime(path, ns=(ns, ns))


def test_a_lone_file_seen_written_in_place_waits_for_the_settle_period(
        tmp_path: Path) -> None:
    folder = tmp_path / "work" / "checkpoints"
    folder.mkdir(parents=True)
    store, clock = LocalStore(tmp_path / "store"), Clock()
    publisher = Publisher(store, folder, settle=10, clock=clock)
    path = folder / "last.pt"
    write_in_place(path, "BEGIN 1\nxx", 0)
    assert publisher.publish_changed() == 0  # the first look: it may be half written
    write_in_place(path, "BEGIN 1\nxxxx\nEND 1\n", 1)
    clock.now = 1
    assert publisher.publish_changed() == 0  # changed under its inode: written in place
    clock.now = 2
    assert publisher.publish_changed() == 0  # unchanged one look: not the settle period
    clock.now = 11
    assert publisher.publish_changed() == 1  # unchanged for 10 s: the settle rule
    assert sets(store, tmp_path)[-1]["last.pt"] == "BEGIN 1\nxxxx\nEND 1\n"
    write_in_place(path, "BEGIN 2\nxx", 12)
    clock.now = 12
    assert publisher.publish_changed() == 0
    clock.now = 13
    assert publisher.publish_changed() == 0  # as the last look found it, but in place
    assert len(sets(store, tmp_path)) == 1
