"""One step of minibatch SGD on the squared error."""

from __future__ import annotations

import numpy as np


def sgd_step(w: np.ndarray, x: np.ndarray, y: np.ndarray, lr: float) -> np.ndarray:
    return w - lr * x.T @ (x @ w - y) / len(y)
