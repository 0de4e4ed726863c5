"""Fixtures and tables that several test modules share."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# Every array a pullback keeps only for its shape is a stand-in here, however small: a
# pullback that reads a stand-in's elements (NaN) fails the gradient checks of its rule.
import tapegrad.registry  # noqa: E402

tapegrad.registry.STAND_IN_BYTES = 0


# --- worked examples, as programs: tests/program/test_codegen.py and test_passes.py run each ---


def haaland(eps, D, Re):
    return 1 / (-1.8 * np.log10((eps / D / 3.7) ** 1.11 + 6.9 / Re)) ** 2


def branchy(x):
    if x > 0:
        return x * 2.0
    return -x


#: (function, arguments it is traced at, new arguments it is replayed at)
WORKED = [
    (lambda a, b: a / (a + b * b), (2.0, 3.0), (1.5, 0.5)),
    (lambda x: np.sin(np.cos(x)), (0.9,), (0.1,)),
    (lambda x1, x2: x1 * x2 + np.sin(x1), (2.0, 3.0), (1.0, -1.0)),
    (haaland, (0.01, 1.0, 3000.0), (0.02, 2.0, 5000.0)),
    (lambda x: -np.log(x**2 + 2 * np.exp(x) + (x + 1) / x), (2.3,), (1.1,)),
    (lambda m, x, b: m * x + b, (2.0, 3.0, 1.0), (0.5, -2.0, 4.0)),
    (branchy, (1.5,), (2.5,)),
]
