"""A small training job that survives preemption: numpy logistic regression by SGD.

It follows costsched's job contract: its checkpoint directory is --checkpoint-dir, else
$COSTSCHED_CHECKPOINT_DIR, else $CHECKPOINT_DIR, else ./ckpt. It checkpoints every
--checkpoint-every seconds and when it receives SIGTERM (what a spot/preemptible instance
gets before it is taken away, and what `costsched` sends before a migration), then exits 0;
started again with a directory holding that checkpoint (the same, or a copy elsewhere) it
resumes from it. It writes the step it is at to $COSTSCHED_PROGRESS_FILE (about every
second, and at each checkpoint) when that is set. Checkpoints are written atomically
(temp file, then rename), each followed by the step it holds in the commit marker
COSTSCHED_COMMIT: costsched then knows the checkpoint's step exactly. The final weights are
the same bytes however often the run was stopped and resumed; --result writes them
(np.save) and the last line prints their SHA-256.

    python examples/train.py --steps 20000 --checkpoint-dir /tmp/ckpt --result w.npy
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import signal
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

CHECKPOINT = "checkpoint.npz"
COMMIT = "COSTSCHED_COMMIT"  # the job contract's commit marker: a save is whole, at its step


def make_data(seed: int, n: int = 4096, dim: int = 32) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, dim))
    true_w = rng.normal(size=dim)
    y = (x @ true_w + 0.5 * rng.normal(size=n) > 0).astype(float)
    return x, y


def loss_and_grad(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    p = 1 / (1 + np.exp(-(x @ w)))
    eps = 1e-12
    loss = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
    return float(loss), x.T @ (p - y) / len(y)


def save(path: Path, step: int, w: np.ndarray, rng_state: dict) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, step=step, w=w, rng=np.array([json.dumps(rng_state)]))
    os.replace(tmp, path)
    (path.parent / COMMIT).write_text(f"{step}\n")  # written last: this save is whole


def report_progress(step: int) -> None:
    """The job contract's progress: the step done, in $COSTSCHED_PROGRESS_FILE (when set),
    written atomically, so that costsched shows true progress instead of an estimate."""
    target = os.environ.get("COSTSCHED_PROGRESS_FILE")
    if not target:
        return
    tmp = f"{target}.tmp"
    with open(tmp, "w") as handle:
        handle.write(f"{step}\n")
    os.replace(tmp, target)


def weights_bytes(w: np.ndarray) -> bytes:
    """The weights as a .npy file's bytes: what --result writes and the SHA-256 covers."""
    buffer = io.BytesIO()
    np.save(buffer, w, allow_pickle=False)
    return buffer.getvalue()


def default_checkpoint_dir() -> str:
    env = os.environ
    return env.get("COSTSCHED_CHECKPOINT_DIR") or env.get("CHECKPOINT_DIR") or "ckpt"


def load(path: Path, dim: int, seed: int) -> tuple[int, np.ndarray, np.random.Generator]:
    rng = np.random.default_rng(seed)
    if not path.exists():
        return 0, np.zeros(dim), rng
    data = np.load(path)
    rng.bit_generator.state = json.loads(str(data["rng"][0]))
    return int(data["step"]), data["w"], rng


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint-dir", default=default_checkpoint_dir(),
                        help="default: $COSTSCHED_CHECKPOINT_DIR, $CHECKPOINT_DIR, ./ckpt")
    parser.add_argument("--checkpoint-every", type=float, default=60.0, help="seconds")
    parser.add_argument("--step-seconds", type=float, default=0.0,
                        help="sleep per step, to make a short job last (for demos)")
    parser.add_argument("--result", type=Path, help="write the final weights here (.npy)")
    parser.add_argument("--hold-while", type=Path, default=None,
                        help="while this file exists, wait after each step, checkpointed: "
                        "to move or take the job away at a known point, whatever the clock")
    stop = {"requested": False}

    def on_sigterm(signum: int, _frame: object) -> None:
        stop["requested"] = True

    signal.signal(signal.SIGTERM, on_sigterm)
    args = parser.parse_args(argv)
    ckpt_dir = Path(args.checkpoint_dir)
    path = ckpt_dir / CHECKPOINT
    try:
        ckpt_dir.mkdir(parents=True, exist_ok=True)
        if not os.access(ckpt_dir, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        print(f"checkpoint directory {ckpt_dir}: not writable ({exc.strerror})", file=sys.stderr)
        return 1
    x, y = make_data(args.seed)
    try:
        step, w, rng = load(path, x.shape[1], args.seed)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        # never train over a checkpoint that cannot be read: it may be all there is
        print(f"checkpoint {path}: unreadable ({exc})", file=sys.stderr)
        return 1
    (ckpt_dir / COMMIT).touch()  # at once: a save is published only once it is committed
    print(f"resumed at step {step}" if step else "started", flush=True)
    report_progress(step)
    last_save = last_report = time.monotonic()
    while step < args.steps:
        batch = rng.integers(0, len(y), size=args.batch_size)
        _, grad = loss_and_grad(w, x[batch], y[batch])
        w -= args.lr * grad
        step += 1
        if args.step_seconds:
            time.sleep(args.step_seconds)
        if args.hold_while is not None and args.hold_while.exists() and not stop["requested"]:
            save(path, step, w, rng.bit_generator.state)
            report_progress(step)
            print(f"holding at step {step}", flush=True)
            while args.hold_while.exists() and not stop["requested"]:
                time.sleep(0.05)
        if time.monotonic() - last_report >= 1.0:
            report_progress(step)
            last_report = time.monotonic()
        if stop["requested"]:
            save(path, step, w, rng.bit_generator.state)
            report_progress(step)
            print(f"SIGTERM: checkpointed at step {step}, exiting", flush=True)
            return 0
        if time.monotonic() - last_save >= args.checkpoint_every:
            save(path, step, w, rng.bit_generator.state)
            last_save = time.monotonic()
    loss, _ = loss_and_grad(w, x, y)
    save(path, step, w, rng.bit_generator.state)
    report_progress(step)
    result = weights_bytes(w)
    if args.result:
        tmp = args.result.with_name(args.result.name + ".tmp")
        tmp.write_bytes(result)
        os.replace(tmp, args.result)
    print(f"done: {step} steps, loss {loss:.4f}", flush=True)
    print(f"weights sha256 {hashlib.sha256(result).hexdigest()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
