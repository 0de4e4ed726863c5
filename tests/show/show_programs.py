"""Programs the picture and viewer tests share."""
import numpy as np


def small_mlp():
    """``(loss, params)``: a small network's mean squared error (notebook 07's network)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 2)).round(2)
    Y = np.array([[0.5], [-1.0], [1.0], [0.0]])
    params = {"W1": rng.normal(size=(2, 3)).round(2), "b1": np.zeros(3),
              "W2": rng.normal(size=(3, 1)).round(2), "b2": 0.0}

    def loss(p):
        h = np.tanh(X @ p["W1"] + p["b1"])
        out = h @ p["W2"] + p["b2"]
        return np.mean((out - Y) ** 2)

    return loss, params
