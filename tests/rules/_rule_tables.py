"""What the elementwise rule tables share: shapes, dtypes, ids and how points are drawn."""
import numpy as np

from tapegrad import trace

SHAPES = [(), (3,), (2, 3)]
DTYPES = [np.float64, np.float32]

#: numpy's two-input ufuncs with rules: (function, interval of x, interval of y) where they are smooth
BINARY = [
    (np.add, (-2, 2), (-2, 2)), (np.subtract, (-2, 2), (-2, 2)),
    (np.multiply, (-2, 2), (-2, 2)), (np.divide, (-2, 2), (0.5, 2)),
    (np.power, (0.5, 2), (-2, 2)), (np.float_power, (0.5, 2), (-2, 2)),
    (np.logaddexp, (-2, 2), (-2, 2)), (np.logaddexp2, (-2, 2), (-2, 2)),
    (np.arctan2, (-2, 2), (0.5, 2)), (np.hypot, (-2, 2), (0.5, 2)),
    (np.maximum, (-2, 2), (-2, 2)), (np.minimum, (-2, 2), (-2, 2)),
    (np.fmax, (-2, 2), (-2, 2)), (np.fmin, (-2, 2), (-2, 2)),
    (np.remainder, (-5, 5), (0.7, 1.5)), (np.fmod, (-5, 5), (0.7, 1.5)),
    (np.copysign, (0.5, 2), (-2, 2)),
]


def name(v):
    """A test id: the function's name."""
    return getattr(v, "__name__", "")


def sample(rng, domain, shape, dtype=np.float64):
    """Points drawn uniformly from `domain` (where the function is smooth)."""
    return rng.uniform(*domain, size=shape).astype(dtype)


def middle(domain):
    """One fixed point of the domain, for scalar checks."""
    return (domain[0] + 2 * domain[1]) / 3


def label(v):
    """A test id for a (label, f, args) row: its label."""
    return v if isinstance(v, str) else ""


def assert_traced_value_is_numpys(f, args, rtol, atol=0.0):
    """f traced gives numpy's own value, shape and dtype (for a function traced through)."""
    value, _ = trace(f, *args)
    expected = f(*args)
    assert np.shape(value) == np.shape(expected) and np.result_type(value) == np.result_type(expected)
    np.testing.assert_allclose(value, expected, rtol=rtol, atol=atol)
