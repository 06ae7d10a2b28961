"""A job's output written to its log with the values of its secrets masked, so that no
log on an instance, and nothing read back from one (`costsched logs`, a failure's last
lines, the dashboard), holds a secret the job printed.

The job's output goes through a pipe the agent reads; each value is replaced by *** as it
passes. A value split between two reads is caught: the end of a read that could begin a
value is held back until the next read says whether it does (or, when the job writes
nothing more for IDLE_FLUSH seconds, written as it is).
"""

from __future__ import annotations

import os
import select
import subprocess
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO

MASK = b"***"
MIN_MASKED = 4  # shorter values would mask ordinary words (as costsched.redact)
IDLE_FLUSH = 0.5  # seconds without output after which a held-back end is written
_READ = 65536


class MaskedOutput:
    """Bytes in, the same bytes with every one of `values` replaced by MASK out."""

    def __init__(self, values: Iterable[bytes]) -> None:
        # Longest first: a value that contains another is masked whole.
        self.values = sorted({v for v in values if len(v) >= MIN_MASKED}, key=len,
                             reverse=True)
        self._held = b""

    def feed(self, data: bytes) -> bytes:
        """What can be written now of what was held and `data`."""
        text = self._held + data
        for value in self.values:
            text = text.replace(value, MASK)
        keep = self._could_begin_a_value(text)
        self._held = text[len(text) - keep:] if keep else b""
        return text[:len(text) - keep] if keep else text

    def flush(self) -> bytes:
        """What was held back, as it is (the job wrote no more of it)."""
        out, self._held = self._held, b""
        return out

    def _could_begin_a_value(self, text: bytes) -> int:
        """The length of the longest end of `text` that is the beginning of a value."""
        longest = 0
        for value in self.values:
            for n in range(min(len(value) - 1, len(text)), longest, -1):
                if text.endswith(value[:n]):
                    longest = n
                    break
        return longest


def values_of(names: Sequence[str], env: dict[str, str]) -> list[bytes]:
    """The values `env` gives the secrets `names`, as the job's output would hold them."""
    return [env[n].encode() for n in names if env.get(n)]


def start(argv: list[str], env: dict[str, str], cwd: Path, log_path: Path,
          values: Sequence[bytes]) -> subprocess.Popen:
    """`argv` started with its output (stdout and stderr) appended to `log_path` with
    `values` masked; the returned process's `copier` thread ends once the output does
    (`finish`)."""
    job = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert job.stdout is not None
    copier = threading.Thread(target=_copy, args=(job.stdout, log_path, MaskedOutput(values)),
                              name="masked-log", daemon=True)
    copier.start()
    job.copier = copier  # type: ignore[attr-defined]
    return job


def finish(job: subprocess.Popen, timeout: float = 5.0) -> None:
    """Wait (at most `timeout` seconds) for the rest of `job`'s output to be written: a
    process the job left behind may hold the pipe open longer, and its output still goes
    to the log, masked, while the agent lives."""
    copier = getattr(job, "copier", None)
    if copier is not None:
        copier.join(timeout)


def _copy(pipe: IO[bytes], log_path: Path, masked: MaskedOutput) -> None:
    fd = pipe.fileno()
    with pipe, log_path.open("ab", buffering=0) as out:
        while True:
            ready, _, _ = select.select([fd], [], [], IDLE_FLUSH)
            if not ready:  # the job is quiet: what was held back is not a value's start
                out.write(masked.flush())
                continue
            data = os.read(fd, _READ)
            if not data:
                break
            out.write(masked.feed(data))
        out.write(masked.flush())
