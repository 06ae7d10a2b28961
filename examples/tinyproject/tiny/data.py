"""Synthetic regression data: batch i is the same wherever and whenever it is made."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

TRUE_W = np.linspace(-1.0, 1.0, 8)


def batch(i: int, size: int = 32) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1000 + i)
    x = rng.normal(size=(size, TRUE_W.size))
    return x, x @ TRUE_W + 0.1 * rng.normal(size=size)


def batches(start: int, stop: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    for i in range(start, stop):
        yield batch(i)
