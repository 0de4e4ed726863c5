"""tapegrad.sweep: the reverse sweep, recorded (`back`) or on values alone (`back_values`), alike bit for bit."""
import numpy as np
import pytest

from tapegrad import grad, pullback


def _identical(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _identical(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _identical(a[k], b[k])
    else:
        assert a == b or (a != a and b != b), (a, b)


_RNG = np.random.default_rng(3)


_M = _RNG.standard_normal((4, 3))


SWEEPS = [
    (lambda a, b: a / (a + b * b), (1.5, 0.7)),
    (lambda x: x * x + np.sin(x) * x, (0.4,)),  # shares of one derivative
    (lambda x: np.sum(np.stack([x, x * 2.0, np.sin(x)]) ** 2), (np.linspace(0.1, 1.0, 5),)),
    (lambda x, w: np.sum(np.tanh(x @ w) * w[0]), (_M, _RNG.standard_normal((3, 2)))),
    (lambda p: p["a"] * p["b"][0] + p["b"][1] ** 2, ({"a": 2.0, "b": (3.0, 4.0)},)),
    (lambda x: np.sum(np.linalg.eigh(x @ x.T + np.eye(4))[0] ** 2), (_M,)),
    (lambda x: np.sum(np.max(x, axis=0)) + np.sum(x[1:, ::2] * 3.0), (_M,)),
    (lambda x: np.sum(np.concatenate([x, x[:2]], axis=0) / np.sum(x * x)), (_M,)),
]


@pytest.mark.parametrize("f, args", SWEEPS)
def test_grad_gives_what_the_recorded_sweep_gives_bit_for_bit(f, args):
    """grad's unrecorded sweep (back_values) calls the pullbacks and sums the shares in the
    order of the recorded one (back), so the two agree exactly, value and type."""
    value, grads = grad(f, *args)
    y, back = pullback(f, *args)
    assert value == y
    _identical(grads, back())


def test_pullback_keeps_every_value_that_grad_frees():
    """grad drops values from its private tape as the sweep passes them; pullback's tape, which
    the user can read, keeps all of them after any number of sweeps."""
    y, back = pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    back(1.0)
    back(1.0)
    assert all(op.val is not None for op in back.tape)


def test_grad_sweep_lets_summed_shares_go_before_the_next_pullback():
    """y gets two shares from y * y; once summed, neither share (nor the step's tangent tuple)
    may stay alive through exp's pullback: the peak is five arrays of x's size, not six."""
    import tracemalloc

    x = np.linspace(0.0, 1.0, 100_000)

    def f(x):
        y = np.exp(x)
        return np.sum(np.sin(y * y))

    grad(f, x)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        grad(f, x)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 5.1 * x.nbytes
