"""Rules of the least-squares fits: np.polyfit in x, y and w."""
import warnings

import numpy as np
import pytest

from tapegrad import check_grad, grad, gradient
from tapegrad.errors import NoRuleError

from _rule_tables import DTYPES

#: sample points well apart (a fit of degree up to 3 on them is well conditioned)
X7 = np.array([-1.0, -0.7, -0.3, 0.1, 0.4, 0.8, 1.1])


def row(label, shapes, f):
    return pytest.param(np.polyfit, shapes, f, id=f"polyfit {label}".strip())


#: (rule, input shapes, function of the inputs going through the rule)
TABLE = [
    row("y", [(7,)], lambda y: np.polyfit(X7, y, 2)),
    row("x", [(7,)], lambda x: np.polyfit(X7 + 0.05 * x, np.cos(X7), 3)),
    row("x y", [(7,), (7,)], lambda x, y: np.polyfit(X7 + 0.05 * x, y, 2)),
    row("w keyword", [(7,), (7,)], lambda y, w: np.polyfit(X7, y, 2, w=w)),
    row("x y w by position", [(7,), (7,), (7,)], lambda x, y, w: np.polyfit(X7 + 0.05 * x, y, 1, None, False, w)),
    row("2-d y", [(7, 3)], lambda y: np.polyfit(X7, y, 2)),
    row("2-d y with x and w", [(7,), (7, 2), (7,)], lambda x, y, w: np.polyfit(X7 + 0.05 * x, y, 2, w=w)),
    row("degree 0", [(7,), (7,)], lambda x, y: np.polyfit(X7 + 0.05 * x, y, 0)),
    row("rcond", [(7,)], lambda y: np.polyfit(X7, y, 2, rcond=1e-10)),
    row("x a list of scalars", [(4,), (), ()], lambda y, a, b: np.polyfit([a - 2.0, 0.5, b + 1.0, 3.0], y, 1)),
]

EXERCISED = {p.values[0] for p in TABLE}


def inputs(rng, shapes, dtype):
    # y, x's shifts and the weights in (0.5, 1.5); a scalar in (0.5, 1.5) too
    return [rng.uniform(0.5, 1.5, size=s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn, shapes, f", TABLE)
def test_rule(fn, shapes, f, dtype, rng):
    """np.polyfit's gradient matches central differences in both modes, for float64 and float32."""
    check_grad(f, *inputs(rng, shapes, dtype))


def _t(*values):
    return tuple(np.array(v, dtype=float) if isinstance(v, list) else v for v in values)


#: (rule, function to differentiate twice, args at a smooth point): tests/rules/test_higher_order.py
#: checks each in the four combinations of modes
ORDER2 = [
    (np.polyfit, lambda x, y, w: np.sum(np.polyfit(x, y, 2, w=w) ** 2),
     _t([-1.0, -0.6, -0.1, 0.3, 0.9, 1.2], [0.5, 1.2, -0.3, 0.8, 2.0, 1.1], [1.0, 0.5, 2.0, 1.5, 0.8, 1.2])),
    (np.polyfit, lambda x, y: np.sum(np.polyfit(x, y, 1) ** 3),
     _t([-1.0, -0.6, -0.1, 0.3, 0.9], [[0.5, 1.0], [1.2, -0.4], [-0.3, 0.2], [0.8, 0.7], [2.0, -1.0]])),
]


# --- closed forms ---


def test_values_are_numpys():
    """Traced, np.polyfit gives numpy's own coefficients, bit for bit."""
    y = np.cos(X7)
    value, _ = grad(lambda y: np.polyfit(X7, y, 2)[0], y)
    assert value == np.polyfit(X7, y, 2)[0]


def test_slope_of_a_line_fit_closed_form():
    """The slope of a straight-line fit is Σ(x - x̄)(y - ȳ)/Σ(x - x̄)², linear in y with
    ∂slope/∂yᵢ = (xᵢ - x̄)/Σ(x - x̄)²; with weights, the weighted means and wᵢ²."""
    y = np.sin(3 * X7)
    xc = X7 - X7.mean()
    np.testing.assert_allclose(gradient(lambda y: np.polyfit(X7, y, 1)[0], y)[0], xc / np.sum(xc ** 2), rtol=1e-12)
    w = np.linspace(0.5, 2.0, 7)
    v = w ** 2
    xw = X7 - np.sum(v * X7) / np.sum(v)
    np.testing.assert_allclose(gradient(lambda y: np.polyfit(X7, y, 1, w=w)[0], y)[0], v * xw / np.sum(v * xw ** 2),
                               rtol=1e-12)


def test_exact_fit_moves_with_the_data():
    """Data on a polynomial p are fitted by p itself; shifting every x by t fits p(· - t), whose
    constant term moves at d/dt p(-t) = -p'(0) (here -b for p = a x² + b x + c)."""
    a, b, c = 0.5, -1.25, 2.0
    y = np.polyval([a, b, c], X7)
    dt = gradient(lambda t: np.polyfit(X7 + t, y, 2)[2], 0.0)[0]
    assert dt == pytest.approx(-b, rel=1e-10)


@pytest.mark.parametrize("option", ["full", "cov"])
def test_full_and_cov_are_refused_naming_the_option(option):
    """full=True and cov=True are refused with an error naming the option, the user's line and
    what to compute instead."""
    with pytest.raises(NotImplementedError, match=rf"numpy.polyfit with {option}=True \(at test_fitting.py:\d+\)"):
        gradient(lambda y: np.sum(np.polyfit(X7, y, 2, **{option: True})[0]), np.cos(X7))


def test_rank_deficient_fit_refuses_a_gradient():
    """With fewer distinct x than deg + 1 the fit is one of many (numpy warns): its value is
    numpy's, and a gradient asked of it raises, naming the line, rather than being wrong."""
    x = np.array([0.0, 0.0, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NoRuleError, match=r"numpy.polyfit at test_fitting.py:\d+ is rank-deficient"):
            gradient(lambda y: np.sum(np.polyfit(x, y, 2)), np.array([1.0, 2.0, 0.5, 1.5]))
