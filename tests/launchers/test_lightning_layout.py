"""A PyTorch-Lightning checkpoint folder: at each save the best few as new files written in
place (`epoch=0-step=400.ckpt`, the older best removed), then `last.ckpt` written as
`last.ckpt.tmp` and renamed over the one before, `hparams.yaml` written once and
`metrics.csv` appended to more often than the job saves. Each save is published a moment
after it, never a set that mixes two saves, wherever the looks fall; a save held back is
said at once. The looks are driven one by one, with the files' times and the publisher's
clock set by the test."""

from __future__ import annotations

import logging
import os
import random
from pathlib import Path

import pytest

from launchers.checkpoints.local import LocalStore
from launchers.publisher import SETTLE, Publisher
from tests.launchers.test_publish_state_logs import append, ns
from tests.launchers.test_publish_whole import Clock, save, sets, work  # noqa: F401
from tests.launchers.test_replaced_together import Event, drive


def in_place(path: Path, text: str, at: float) -> None:
    """`text` written straight to `path` (its inode kept when it is there), time `at`."""
    with path.open("a" if path.exists() else "w") as out:
        out.write(text)
    os.utime(path, ns=(ns(at), ns(at)))


class Job:
    """A Lightning-style job's folder: each save names its best files in last.ckpt."""

    def __init__(self, folder: Path, keep: int = 2) -> None:
        self.folder, self.keep, self.best = folder, keep, []

    def start(self) -> None:
        (self.folder / "hparams.yaml").write_text("lr: 0.05\n")
        os.utime(self.folder / "hparams.yaml", ns=(ns(0), ns(0)))
        append(self.folder / "metrics.csv", "step,loss", 0)

    def save(self, step: int, at: float, write: float = 0.01, pause: float = 0.0,
             new_best: bool = True) -> list[Event]:
        """A save of `step` from `at`: its best file written in place in two halves
        (`pause` s between them, the second `write` s after), the oldest best removed,
        then last.ckpt renamed in. Each file's content names the save it is of."""
        best = self.folder / f"epoch={step // 400}-step={step}.ckpt"
        events: list[Event] = []
        t = at
        if new_best:
            events.append((t, lambda: in_place(best, f"half {step}|", t)))
            t2 = t + pause + write
            events.append((t2, lambda: in_place(best, f"whole {step}", t2)))
            t = t2 + 0.001

            def prune() -> None:
                self.best.append(best.name)
                while len(self.best) > self.keep:
                    (self.folder / self.best.pop(0)).unlink()
            events.append((t, prune))
        t_last = t + write
        events.append((t_last, lambda: save(self.folder / "last.ckpt",
                                             f"{step} best " + ",".join(self.best), t_last)))
        return events

    def logs(self, until: float, every: float = 0.5) -> list[Event]:
        return [(k * every, lambda k=k: append(self.folder / "metrics.csv", f"{k},0.5",
                                               k * every))
                for k in range(1, int(until / every))]


def whole(store: LocalStore, tmp_path: Path) -> list[int]:
    """The step of every version that holds last.ckpt, each asserted whole: its best files
    are the ones its last.ckpt names, each written through, and no other."""
    found = []
    for version in sets(store, tmp_path):
        if "last.ckpt" not in version:
            continue
        step, _, best = version["last.ckpt"].partition(" best ")
        named = set(best.split(",")) - {""}
        held = {n for n in version if n.endswith(".ckpt") and n != "last.ckpt"}
        assert held == named, version
        for name in held:
            assert version[name] == f"half {name.split('=')[-1][:-5]}|whole " \
                f"{name.split('=')[-1][:-5]}", version
        assert version["hparams.yaml"] == "lr: 0.05\n"
        assert version["metrics.csv"].endswith("\n"), version  # whole lines
        found.append(int(step))
    return found


def test_every_save_of_a_lightning_folder_is_published_though_its_log_grows_between(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """Saves every 2 s, each a new best (the first minutes of a run), metrics.csv appended
    every 0.5 s: the directory never settles, and each save is published before the
    next."""
    folder, store, clock = work
    assert SETTLE == 10
    publisher = Publisher(store, folder, keep=100, clock=clock)
    job = Job(folder)
    job.start()
    events = [e for k in range(1, 30) for e in job.save(200 * k, 2.0 * k + 0.3)]
    published = drive(publisher, clock, events + job.logs(62), until=61, poll=5.0)
    steps = whole(store, tmp_path)
    assert len(steps) >= 8, steps  # at most of the agent's looks, or a second after
    assert steps == sorted(steps) and steps[0] <= 1000 and publisher.error == ""
    assert all(b - a <= 6.5 for a, b in zip(published[1:-1], published[2:], strict=True))


def test_a_look_in_the_middle_of_a_save_never_publishes_it_half_written(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path) -> None:  # noqa: F811
    """The best file's second half comes 1.5 s after its first (a large state, a loaded
    machine), the looks every 0.25 s: none publishes the half, nor last.ckpt of one save
    beside the best files of another."""
    folder, store, clock = work
    publisher = Publisher(store, folder, keep=100, clock=clock)
    job = Job(folder)
    job.start()
    events = [e for k in range(1, 12) for e in job.save(200 * k, 5.0 * k, pause=1.5)]
    drive(publisher, clock, events + job.logs(60), until=60, poll=0.25)
    steps = whole(store, tmp_path)  # each asserted whole
    # (the first save's last.ckpt is a new name: it is not seen renamed in until the next,
    # and hparams.yaml is told no part of a save once last.ckpt was renamed in twice)
    assert steps == list(range(steps[0], 2400, 200)) and steps[0] <= 600, steps


@pytest.mark.parametrize("seed", range(40))
def test_no_look_timing_ever_publishes_a_torn_version(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path,  # noqa: F811
        seed: int) -> None:
    """Saves 0.5 to 6 s apart, some not a new best, each best file written with a pause of
    up to 3 s within it, the agent's looks every 5 s (give or take a second, from a random
    start) and whenever the publisher asks: every version published is whole."""
    rng = random.Random(seed)
    folder, store, clock = work
    publisher = Publisher(store, folder, keep=100, clock=clock)
    job = Job(folder, keep=rng.choice([1, 2, 3]))
    job.start()
    events, at = [], 0.2
    for k in range(1, 25):
        events += job.save(200 * k, at, write=rng.uniform(0.001, 0.3),
                           pause=rng.choice([0, 0, rng.uniform(0, 3)]),
                           new_best=k < 3 or rng.random() < 0.7)
        at = max(e[0] for e in events) + rng.uniform(0.5, 6)
    events += job.logs(at, every=rng.uniform(0.2, 3))
    events.sort(key=lambda e: e[0])
    look = rng.uniform(0, 5)
    while look < at + 10:
        while events and events[0][0] <= look:
            events.pop(0)[1]()
        clock.now = look
        publisher.publish_changed()
        step = rng.uniform(4, 6)
        if publisher.again_at is not None and look < publisher.again_at < look + step:
            step = publisher.again_at - look
        look += step
    steps = whole(store, tmp_path)  # each asserted whole
    assert len(steps) >= 3 and steps == sorted(steps), steps


def test_a_best_file_written_after_last_ckpt_holds_its_saves_back_said_at_once(
        work: tuple[Path, LocalStore, Clock], tmp_path: Path,  # noqa: F811
        caplog: pytest.LogCaptureFixture) -> None:
    """A job that renames last.ckpt first, then writes its best file in place: a set that
    may lack a save's last file is never taken; the first save held back is said at once,
    with what the looks saw and the fix, in the agent's log too."""
    folder, store, clock = work
    caplog.set_level(logging.WARNING, logger="costsched.agent")
    publisher = Publisher(store, folder, keep=100, clock=clock)
    job = Job(folder)
    job.start()
    events = []
    for k in range(1, 12):
        step, at = 200 * k, 5.0 * k + 0.5
        best = folder / f"epoch=0-step={step}.ckpt"
        events += [(at, lambda s=step, a=at: save(folder / "last.ckpt", f"{s}", a)),
                   (at + 0.2, lambda b=best, s=step, a=at: in_place(b, f"w{s}", a + 0.2))]
    said_at = None
    for clock.now in [x / 2 for x in range(1, 120)]:
        while events and events[0][0] <= clock.now:
            events.pop(0)[1]()
        publisher.publish_changed()
        if publisher.error and said_at is None:
            said_at = clock.now
    assert said_at is not None and said_at <= 17, said_at  # a look after the third save
    # (the first save, under new names alone, is the new-names rule's: none after it)
    assert {v.get("last.ckpt") for v in sets(store, tmp_path)} <= {None, "200"}
    assert ("was written after last.ckpt was renamed into place (a file written in place "
            "after the save's renamed file cannot be told whole): touch "
            "$COSTSCHED_CHECKPOINT_DIR/COSTSCHED_COMMIT after each save") in publisher.error
    said = [r.getMessage() for r in caplog.records if "not published" in r.getMessage()]
    assert said and "written after last.ckpt" in said[0]
