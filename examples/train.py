"""A small training job that survives preemption: numpy logistic regression by SGD.

It checkpoints every --checkpoint-every seconds and when it receives SIGTERM (what a
spot/preemptible instance gets before it is taken away, and what `costsched` sends before
a migration), then exits; started again with the same --checkpoint-dir it resumes from the
last checkpoint. Checkpoints are written atomically (temp file, then rename).

    python examples/train.py --steps 20000 --checkpoint-dir /tmp/ckpt
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np

CHECKPOINT = "checkpoint.npz"


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
    parser.add_argument("--checkpoint-dir", default=os.environ.get("CHECKPOINT_DIR", "ckpt"))
    parser.add_argument("--checkpoint-every", type=float, default=60.0, help="seconds")
    parser.add_argument("--step-seconds", type=float, default=0.0,
                        help="sleep per step, to make a short job last (for demos)")
    args = parser.parse_args(argv)

    stop = {"requested": False}

    def on_sigterm(signum: int, _frame: object) -> None:
        stop["requested"] = True

    signal.signal(signal.SIGTERM, on_sigterm)
    ckpt_dir = Path(args.checkpoint_dir)
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    path = ckpt_dir / CHECKPOINT
    x, y = make_data(args.seed)
    step, w, rng = load(path, x.shape[1], args.seed)
    print(f"resumed at step {step}" if step else "started", flush=True)
    last_save = time.monotonic()
    while step < args.steps:
        batch = rng.integers(0, len(y), size=args.batch_size)
        _, grad = loss_and_grad(w, x[batch], y[batch])
        w -= args.lr * grad
        step += 1
        if args.step_seconds:
            time.sleep(args.step_seconds)
        if stop["requested"]:
            save(path, step, w, rng.bit_generator.state)
            print(f"SIGTERM: checkpointed at step {step}, exiting", flush=True)
            return 0
        if time.monotonic() - last_save >= args.checkpoint_every:
            save(path, step, w, rng.bit_generator.state)
            last_save = time.monotonic()
    loss, _ = loss_and_grad(w, x, y)
    save(path, step, w, rng.bit_generator.state)
    print(f"done: {step} steps, loss {loss:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
