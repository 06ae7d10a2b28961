"""Tiny training project: least squares by minibatch SGD, checkpointed, resumable.

Checkpoints go to $CHECKPOINT_DIR (costsched sets it; ./checkpoints otherwise) every
--checkpoint-every seconds and on SIGTERM (a preemption notice or a move), written to a
temporary name and renamed. Started again with that checkpoint it carries on, and the final
weights (result.npy beside the checkpoint) are the same bytes as an uninterrupted run's.
The step it is at goes to $COSTSCHED_PROGRESS_FILE (where costsched sets it) as often,
which is what `costsched status` shows and measures its speed from.

    python train.py --steps 600
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from pathlib import Path

import numpy as np
from tiny.data import batches
from tiny.model import sgd_step


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--checkpoint-every", type=float, default=0.5, help="seconds")
    parser.add_argument("--step-seconds", type=float, default=0.0, help="to make it last")
    parser.add_argument("--hold-while", type=Path, default=None,
                        help="while this file exists, wait after each step, checkpointed: "
                        "to take the job away at a known point in a demo, whatever the clock")
    args = parser.parse_args()
    folder = Path(os.environ.get("CHECKPOINT_DIR", "checkpoints"))
    folder.mkdir(parents=True, exist_ok=True)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))

    step, w = 0, np.zeros(8)
    if (folder / "state.npz").exists():
        saved = np.load(folder / "state.npz")
        step, w = int(saved["step"]), saved["w"]
        print(f"resumed at step {step}", flush=True)
    else:
        print("started at step 0", flush=True)

    progress = os.environ.get("COSTSCHED_PROGRESS_FILE")

    def checkpoint() -> None:
        np.savez(folder / "state.tmp.npz", step=step, w=w)
        os.replace(folder / "state.tmp.npz", folder / "state.npz")
        if progress:  # the step, written whole: a temporary file, then renamed
            Path(progress + ".tmp").write_text(f"{step}\n")
            os.replace(progress + ".tmp", progress)

    last = time.monotonic()
    for x, y in batches(start=step, stop=args.steps):
        w = sgd_step(w, x, y, args.lr)
        step += 1
        time.sleep(args.step_seconds)
        if args.hold_while is not None and args.hold_while.exists() and not stop:
            checkpoint()
            print(f"holding at step {step}", flush=True)
            while args.hold_while.exists() and not stop:
                time.sleep(0.05)
        if stop:
            checkpoint()
            print(f"stopped at step {step}", flush=True)
            return 0
        if time.monotonic() - last >= args.checkpoint_every:
            checkpoint()
            last = time.monotonic()
    checkpoint()
    np.save(folder / "result.tmp.npy", w)
    os.replace(folder / "result.tmp.npy", folder / "result.npy")
    print(f"done at step {step}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
