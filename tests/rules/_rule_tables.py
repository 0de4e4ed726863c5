"""What the elementwise rule tables share: shapes, dtypes, ids and how points are drawn."""
import numpy as np

SHAPES = [(), (3,), (2, 3)]
DTYPES = [np.float64, np.float32]


def name(v):
    """A test id: the function's name."""
    return getattr(v, "__name__", "")


def sample(rng, domain, shape, dtype=np.float64):
    """Points drawn uniformly from `domain` (where the function is smooth)."""
    return rng.uniform(*domain, size=shape).astype(dtype)


def middle(domain):
    """One fixed point of the domain, for scalar checks."""
    return (domain[0] + 2 * domain[1]) / 3
