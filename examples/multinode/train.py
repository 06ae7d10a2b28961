"""A small multi-node training job: every node computes a partial sum each step, rank 0
adds them up over TCP, updates the shared state and sends it back; rank 0 checkpoints.

Plain sockets and the standard library. Run by costsched (or SkyPilot) on N nodes, it reads
the gang from SKYPILOT_NODE_RANK, SKYPILOT_NUM_NODES and SKYPILOT_NODE_IPS (rank 0's address
first); GANG_PORT (default 29400) is the port rank 0 listens on. The state is whole numbers,
so a run that was preempted and resumed from its checkpoint ends with exactly the result of
a run that never stopped. When a node goes away, rank 0 checkpoints the step it was on and
every node exits; the gang is started again (the lost node replaced) and resumes there.
On its own (no SKYPILOT_* set) it runs as one node:

    python train.py --steps 200 --checkpoint-dir /tmp/ckpt
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import struct
import sys
import time
from pathlib import Path

MODULUS = 2_147_483_647  # the state lives in the integers modulo this prime
_stop = False


def partial(step: int, rank: int, state: int) -> int:
    """Node `rank`'s share of step `step`'s work: its slice of a sum."""
    return sum((state + step * 7919 + rank * 104_729 + i) ** 2 for i in range(64)) % MODULUS


def update(state: int, total: int) -> int:
    return (state * 48_271 + total) % MODULUS


def send(conn: socket.socket, *values: int) -> None:
    conn.sendall(struct.pack(f"!{len(values)}q", *values))


def receive(conn: socket.socket, count: int) -> tuple[int, ...]:
    size, data = 8 * count, b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("a node of the gang went away")
        data += chunk
    return struct.unpack(f"!{count}q", data)


def load(directory: Path) -> tuple[int, int]:
    """(next step, state) from the newest checkpoint, or the start."""
    try:
        doc = json.loads((directory / "state.json").read_text())
        return int(doc["step"]), int(doc["state"])
    except (OSError, ValueError, KeyError):
        return 0, 1


def save(directory: Path, step: int, state: int, name: str = "state.json") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    temp = directory / f".{name}.tmp"
    temp.write_text(json.dumps({"step": step, "state": state}))
    os.replace(temp, directory / name)  # whole or not at all: the agent never sees half


def progress(step: int) -> None:
    path = os.environ.get("COSTSCHED_PROGRESS_FILE")
    if path:
        Path(path).write_text(str(step))


def connect(address: str, port: int, seconds: float = 60.0) -> socket.socket:
    deadline = time.monotonic() + seconds
    while True:
        try:
            return socket.create_connection((address, port), timeout=seconds)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def rank0(nodes: int, port: int, steps: int, every: int, pause: float, ckpt: Path) -> int:
    step, state = load(ckpt)
    peers: list[socket.socket] = []
    if nodes > 1:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("", port))
        server.listen(nodes)
        server.settimeout(120)
        for _ in range(nodes - 1):
            conn, _ = server.accept()
            conn.settimeout(None)
            peers.append(conn)
        server.close()
        for conn in peers:  # where to start: every node resumes from rank 0's checkpoint
            send(conn, step, state)
    print(f"rank 0 of {nodes}: from step {step}", flush=True)
    while step < steps:
        if _stop:  # asked to stop: the newest state is checkpointed, then exit
            save(ckpt, step, state)
            return 143
        total = partial(step, 0, state)
        try:
            for conn in peers:
                total = (total + receive(conn, 1)[0]) % MODULUS
        except ConnectionError:  # a node was lost: step `step` starts from `state`, whole
            save(ckpt, step, state)
            raise
        state = update(state, total)
        step += 1
        for conn in peers:
            send(conn, step, state)
        if step % every == 0 or step == steps:
            save(ckpt, step, state)
        progress(step)
        time.sleep(pause)
    save(ckpt, step, state, "result.json")
    print(f"done: step {step}, state {state}", flush=True)
    return 0


def worker(rank: int, master: str, port: int, steps: int) -> int:
    conn = connect(master, port)
    step, state = receive(conn, 2)
    print(f"rank {rank}: from step {step}", flush=True)
    while step < steps:
        send(conn, partial(step, rank, state))
        step, state = receive(conn, 2)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--checkpoint-every", type=int, default=10, help="steps")
    parser.add_argument("--step-seconds", type=float, default=0.0)
    parser.add_argument("--checkpoint-dir", type=Path,
                        default=Path(os.environ.get("CHECKPOINT_DIR", "checkpoints")))
    args = parser.parse_args()
    rank = int(os.environ.get("SKYPILOT_NODE_RANK", "0"))
    nodes = int(os.environ.get("SKYPILOT_NUM_NODES", "1"))
    master = (os.environ.get("SKYPILOT_NODE_IPS") or "127.0.0.1").splitlines()[0]
    port = int(os.environ.get("GANG_PORT", "29400"))

    def stop(_signum: int, _frame: object) -> None:
        global _stop
        _stop = True

    if rank == 0:  # rank 0 checkpoints when asked to stop; the others end with it
        signal.signal(signal.SIGTERM, stop)
    try:
        if rank == 0:
            return rank0(nodes, port, args.steps, args.checkpoint_every, args.step_seconds,
                         args.checkpoint_dir)
        return worker(rank, master, port, args.steps)
    except (ConnectionError, OSError) as exc:  # a node was lost: resume from a checkpoint
        print(f"rank {rank}: {exc}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
