"""Rules of the histograms: np.histogram's edges, weighted counts and densities."""
import numpy as np
import pytest

from tapegrad import ZERO, check_grad, grad, gradient

from _rule_tables import DTYPES

#: bins given as edges, none within 0.05 of the points `inputs` draws (odd multiples of 1/8)
EDGES = np.array([-1.2, -0.5, 0.0, 0.5, 1.1])


def row(label, shapes, f):
    return pytest.param(np.histogram, shapes, f, id=f"histogram {label}".strip())


#: (rule, input shapes, function of the inputs going through the rule)
TABLE = [
    row("edges", [(7,)], lambda a: np.histogram(a, 4)[1]),
    row("edges of a 2-d a", [(2, 4)], lambda a: np.histogram(a, 3)[1]),
    row("edges of numpy's estimator", [(9,)], lambda a: np.histogram(a, "auto")[1]),
    row("counts beside edges", [(7,)], lambda a: np.histogram(a, 4)[0] * np.histogram(a, 4)[1][1:]),
    row("density", [(7,)], lambda a: np.histogram(a, 4, density=True)[0]),
    row("weights", [(7,), (7,)], lambda a, w: np.histogram(a, 4, weights=w)[0]),
    row("weights keyword 2-d", [(2, 4), (2, 4)], lambda a, w: np.histogram(a, bins=3, weights=w)[0]),
    row("density weights", [(7,), (7,)], lambda a, w: np.histogram(a, 4, density=True, weights=w)[0]),
    row("range", [(7,), (), ()], lambda a, lo, hi: np.histogram(a, 3, (lo - 1, hi + 1))[1]),
    row("range keyword density", [(7,), (), ()],
        lambda a, lo, hi: np.histogram(a, bins=3, range=(lo - 1, hi + 1), density=True)[0]),
    row("bins array density", [(7,), (5,)], lambda a, e: np.histogram(a, EDGES + 0.02 * e, density=True)[0]),
    row("bins list", [(7,), (), ()], lambda a, e0, e1: np.concatenate(np.histogram(a, [e0 - 2.0, -0.5, 0.5, e1 + 1.0], density=True))),
]

EXERCISED = {p.values[0] for p in TABLE}


def inputs(rng, shapes, dtype):
    # points drawn at random (with the fixed seed, none within a step of central differences of
    # an edge, nor tied for the minimum or the maximum), weights and range ends in (0.5, 1.5)
    xs = [rng.uniform(-1, 1, size=s) if i == 0 else rng.uniform(0.5, 1.5, size=s) for i, s in enumerate(shapes)]
    return [np.asarray(x).astype(dtype) for x in xs]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn, shapes, f", TABLE)
def test_rule(fn, shapes, f, dtype, rng):
    """np.histogram's gradient matches central differences in both modes, for float64 and float32."""
    check_grad(f, *inputs(rng, shapes, dtype))


def _t(*values):
    return tuple(np.array(v, dtype=float) if isinstance(v, list) else v for v in values)


A = [0.4, -0.9, 0.1, 0.7, -0.3, 0.95]
#: (rule, function to differentiate twice, args at a smooth point): tests/rules/test_higher_order.py
#: checks each in the four combinations of modes
ORDER2 = [
    (np.histogram, lambda a: np.sum(np.histogram(a, 3, density=True)[0] ** 2) + np.sum(np.histogram(a, 3)[1] ** 3),
     _t(A)),
    (np.histogram, lambda a, w: np.sum(np.histogram(a, 3, density=True, weights=w)[0] ** 2), _t(A, [1.0, 2.0, 0.5, 1.5, 1.0, 0.7])),
    (np.histogram, lambda a, lo, hi: np.sum(np.histogram(a, 3, (lo, hi), density=True)[0] ** 2), _t(A, -1.5, 1.2)),
    (np.histogram, lambda a, e: np.sum(np.histogram(a, e, density=True)[0] ** 2), _t(A, [-1.0, -0.2, 0.3, 1.0])),
]


# --- closed forms ---


def test_values_are_numpys():
    """Traced, np.histogram gives numpy's own counts and edges."""
    a = np.array(A)
    for kwargs in ({}, {"bins": 3, "density": True}, {"bins": "auto"}, {"range": (-2.0, 2.0)}):
        value, _ = grad(lambda a: np.sum(np.histogram(a, **kwargs)[1]), a)
        assert value == np.sum(np.histogram(a, **kwargs)[1])


def test_edges_move_with_the_minimum_and_the_maximum():
    """edges = linspace(min, max, n + 1): Σ edges = (n + 1)(min + max)/2, so the smallest and the
    largest element each get (n + 1)/2, the others 0; tied ends share it evenly."""
    a = np.array([0.5, -1.0, 2.0, 0.25])
    np.testing.assert_array_equal(gradient(lambda a: np.sum(np.histogram(a, 4)[1]), a)[0], [0.0, 2.5, 2.5, 0.0])
    tied = np.array([2.0, -1.0, 2.0, -1.0])
    np.testing.assert_array_equal(gradient(lambda a: np.sum(np.histogram(a, 4)[1]), tied)[0], [1.25] * 4)
    # all equal: numpy widens the range by 1/2 on both sides, and the edges move with the value
    np.testing.assert_array_equal(gradient(lambda a: np.histogram(a, 2)[1][0], np.ones(4))[0], [0.25] * 4)


def test_counts_are_piecewise_constant():
    """The counts alone pass nothing back: ZeroTangent for a, with or without a range."""
    a = np.array(A)
    assert grad(lambda a: np.sum(np.histogram(a, 3)[0] * 1.0), a)[1][1] is ZERO
    assert grad(lambda a: np.sum(np.histogram(a, 3, (-2.0, 2.0), density=True)[0]), a)[1][1] is ZERO


def test_weights_get_the_cotangent_of_their_bin():
    """hist = Σ wᵢ [aᵢ in bin k]: each weight gets its bin's cotangent, the last bin closed on the
    right, 0 outside the range."""
    a = np.array([0.0, 0.3, 1.0, 1.5, -0.2])
    dhist = np.array([1.0, 10.0])
    dw = gradient(lambda w: np.sum(np.histogram(a, 2, (0.0, 1.0), weights=w)[0] * dhist), np.ones(5))[0]
    np.testing.assert_array_equal(dw, [1.0, 1.0, 10.0, 0.0, 0.0])


def test_density_integrates_to_one_whatever_the_data():
    """Σ hist·widths = 1 for every a and weights: its gradient is 0 in both."""
    a, w = np.array(A), np.linspace(0.5, 2.0, 6)

    def total(a, w):
        hist, edges = np.histogram(a, 4, density=True, weights=w)
        return np.sum(hist * np.diff(edges))

    da, dw = gradient(total, a, w)
    np.testing.assert_allclose(da, 0.0, atol=1e-14)
    np.testing.assert_allclose(dw, 0.0, atol=1e-14)
