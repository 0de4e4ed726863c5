"""Rules of the methods of ufuncs: ``outer`` of every two-input ufunc that has a rule, ``reduce``
and ``accumulate`` of add, multiply, maximum, minimum, fmax, fmin, logaddexp and logaddexp2, and
``np.add.reduceat``; the printed tape, compiled gradients, forward mode and pickling of calls
of a ufunc's method, and the errors for the methods tapegrad does not differentiate."""
import pickle

import numpy as np
import pytest
import scipy.special as sp

import tapegrad
from tapegrad import NoRuleError, ZERO, check_grad, compiled_grad, grad, gradient, jvp, trace
from tapegrad.errors import qualified_name, short_name, type_str, ufunc_method
from tapegrad.gradcontext import GradContext
from tapegrad.registry import COMPLEX, NONDIFF, RULES, declarations_undone

from _complex import complex_of, complex_table_tests, power
from _rule_tables import BINARY as NUMPY_BINARY, DTYPES

#: the differentiable two-input ufuncs, with the intervals of their two arguments where they are
#: smooth (those of tests/rules/test_elementwise.py and test_special.py)
BINARY = NUMPY_BINARY + [
    (np.heaviside, (0.5, 2), (0.2, 0.8)),
    (sp.beta, (0.5, 3), (0.5, 3)), (sp.betaln, (0.5, 3), (0.5, 3)),
    (sp.xlogy, (-2, 2), (0.1, 3)), (sp.xlog1py, (-2, 2), (-0.5, 3)),
    (sp.rel_entr, (0.1, 2), (0.1, 2)),
    # (tests/rules/test_special_elementary.py and test_special_integrals.py)
    (sp.powm1, (0.5, 2), (-2, 2)), (sp.boxcox, (0.5, 3), (-1, 1)), (sp.boxcox1p, (-0.5, 2), (-1, 1)),
    (sp.inv_boxcox, (-1, 1), (-0.5, 0.5)), (sp.inv_boxcox1p, (-1, 1), (-0.5, 0.5)), (sp.binom, (2, 6), (0.3, 1.8)),
    (sp.poch, (0.5, 3), (-0.4, 2)), (sp.kl_div, (0.2, 2), (0.2, 2)), (sp.huber, (0.5, 1.5), (-3, 3)),
    (sp.pseudo_huber, (0.5, 1.5), (-3, 3)), (sp.owens_t, (-2, 2), (-2, 2)), (sp.ellipkinc, (-1.5, 1.5), (-1, 0.9)),
    (sp.ellipeinc, (-1.5, 1.5), (-1, 0.9)), (sp.agm, (0.5, 3), (0.5, 3)),
]
#: (ufunc of (parameter, x), constant parameters, interval of x): differentiated in x
#: (tests/rules/test_special_extra.py covers the parameter)
OF_X = [
    (sp.jv, np.array([0.0, 1.0, 2.5]), (0.5, 4)), (sp.yv, np.array([0.5, 2.5]), (0.5, 4)),
    (sp.yn, np.array([0, 1, 2]), (0.5, 4)), (sp.iv, np.array([0.5, 1.5]), (0.5, 3)),
    (sp.ive, np.array([0.5, 1.0]), (0.2, 3)), (sp.kv, np.array([0.5, 1.5, 2.0]), (0.3, 3)),
    (sp.gammainc, np.array([0.5, 1.0, 3.0]), (0.2, 4)), (sp.gammaincc, np.array([0.7, 2.0]), (0.2, 4)),
    # (tests/rules/test_special_integrals.py, test_special_bessel_extra.py, test_special_distributions.py)
    (sp.expn, np.array([0, 1, 3]), (0.3, 3)), (sp.kn, np.array([0, 1, 3]), (0.3, 3)),
    (sp.jve, np.array([0.5, 1.5]), (0.5, 4)), (sp.yve, np.array([0.5, 2.5]), (0.5, 4)),
    (sp.kve, np.array([0.5, 1.5]), (0.3, 3)), (sp.stdtr, np.array([2.5, 4.0]), (-3, 3)),
    (sp.chdtr, np.array([1.5, 3.0]), (0.3, 5)), (sp.chdtrc, np.array([1.5, 3.0]), (0.3, 5)),
    (sp.pdtr, np.array([0, 2, 3]), (0.5, 4)), (sp.pdtrc, np.array([0, 2, 3]), (0.5, 4)),
]
#: the Hankel functions of (order, x), complex valued: a real function of them is differentiated in x
HANKEL = [sp.hankel1, sp.hankel2, sp.hankel1e, sp.hankel2e]
HANKEL_ORDERS = np.array([0.5, 1.5])
#: well-apart values for the extrema, so that a step of central differences changes no pick
DISTINCT = "distinct"
#: where each reduction and scan is smooth: extrema away from ties, products of moderate size
SCAN_DOMAINS = {np.add: (-1, 1), np.multiply: (0.5, 1.5), np.maximum: DISTINCT, np.minimum: DISTINCT,
                np.fmax: DISTINCT, np.fmin: DISTINCT, np.logaddexp: (-2, 2), np.logaddexp2: (-2, 2)}

C4 = np.array([0.5, -1.5, 2.0, 0.75])
EXPONENTS = np.array([0.5, 2.0, -1.0])
STEPS = np.array([0.0, -0.4, 0.0, 0.9])  # heaviside's first argument, with the zeros where its second counts
MASK = np.array([[True, False, True, True], [False, True, True, False], [True, True, False, True]])


def row(label, fn, specs, f):
    """specs: one (shape, interval or DISTINCT) per argument of f."""
    return pytest.param(fn, specs, f, id=f"{short_name(fn)} {label}".strip())


def _outer_rows():
    rows = []
    for uf, dx, dy in BINARY:
        if uf is np.heaviside:  # (first, for its second-order row: a first argument with zeros)
            rows.append(row("constant first with zeros", np.heaviside.outer, [((3,), dy)],
                            lambda y: np.heaviside.outer(STEPS, y)))
        rows.append(row("vectors", uf.outer, [((3,), dx), ((4,), dy)], lambda a, b, uf=uf: uf.outer(a, b)))
    rows.append(row("vectors", np.divmod.outer, [((3,), (-5, 5)), ((4,), (0.7, 1.5))],
                    lambda a, b: np.divmod.outer(a, b)[1]))
    rows.append(row("matrix by vector", np.divmod.outer, [((2, 3), (-5, 5)), ((2,), (0.7, 1.5))],
                    lambda a, b: np.divmod.outer(a, b)[1] * 2 + np.divmod.outer(a, b)[0]))
    for uf, v, dx in OF_X:
        rows.append(row("in x", uf.outer, [((4,), dx)], lambda x, uf=uf, v=v: uf.outer(v, x)))
    for uf in HANKEL:
        rows.append(row("in x", uf.outer, [((4,), (0.5, 4))],
                        lambda x, uf=uf: np.real(uf.outer(HANKEL_ORDERS, x)) + 2 * np.imag(uf.outer(HANKEL_ORDERS, x))))
    rows += [
        row("same array twice", np.subtract.outer, [((5,), (-2, 2))], lambda x: np.subtract.outer(x, x)),
        row("same matrix twice", np.subtract.outer, [((2, 3), (-2, 2))], lambda x: np.subtract.outer(x, x)),
        row("matrix by vector", np.subtract.outer, [((2, 3), (-2, 2)), ((4,), (-2, 2))],
            lambda a, b: np.subtract.outer(a, b)),
        row("same array twice", np.multiply.outer, [((2, 3), (-2, 2))], lambda x: np.multiply.outer(x, x)),
        row("constant first", np.multiply.outer, [((2, 3), (-2, 2))], lambda x: np.multiply.outer(C4, x)),
        row("constant second", np.multiply.outer, [((2, 3), (-2, 2))], lambda x: np.multiply.outer(x, C4)),
        row("scalar first", np.add.outer, [((), (-2, 2)), ((2, 3), (-2, 2))], lambda a, b: np.add.outer(a, b)),
        row("scalar second", np.add.outer, [((2, 3), (-2, 2)), ((), (-2, 2))], lambda a, b: np.add.outer(a, b)),
        row("matrices", np.divide.outer, [((2, 3), (-2, 2)), ((3, 2), (0.5, 2))], lambda a, b: np.divide.outer(a, b)),
        row("constant exponents", np.power.outer, [((4,), (0.5, 2))], lambda x: np.power.outer(x, EXPONENTS)),
        row("distinct", np.maximum.outer, [((2, 3), DISTINCT), ((4,), DISTINCT)], lambda a, b: np.maximum.outer(a, b + 0.05)),
        # (integer exponents; nextafter's direction has no derivative)
        row("integer exponents", np.ldexp.outer, [((3,), (-2, 2))], lambda x: np.ldexp.outer(x, np.array([-1, 0, 2]))),
        row("vectors", np.nextafter.outer, [((3,), (-2, 2)), ((4,), (-2, 2))], lambda a, b: np.nextafter.outer(a, b)),
    ]
    return rows


def _reduce_rows():
    rows = []
    for uf, domain in SCAN_DOMAINS.items():
        fn = uf.reduce
        rows += [
            row("axis 0 by default", fn, [((3, 4), domain)], lambda x, fn=fn: fn(x)),
            row("axis=1", fn, [((3, 4), domain)], lambda x, fn=fn: fn(x, axis=1)),
            row("axis=None", fn, [((3, 4), domain)], lambda x, fn=fn: fn(x, axis=None)),
            row("axes (0, 2) keepdims", fn, [((2, 3, 2), domain)], lambda x, fn=fn: fn(x, axis=(0, 2), keepdims=True)),
            row("axis=-1 keepdims", fn, [((3, 4), domain)], lambda x, fn=fn: fn(x, axis=-1, keepdims=True)),
            row("vector", fn, [((5,), domain)], lambda x, fn=fn: fn(x)),
        ]
    rows += [
        row("initial", np.add.reduce, [((3, 4), (-1, 1))], lambda x: np.add.reduce(x, axis=1, initial=2.5)),
        row("initial", np.multiply.reduce, [((3, 4), (0.5, 1.5))], lambda x: np.multiply.reduce(x, initial=1.5)),
        row("initial wins some", np.maximum.reduce, [((3, 4), DISTINCT)], lambda x: np.maximum.reduce(x, axis=1, initial=0.05)),
        row("initial", np.minimum.reduce, [((3, 4), DISTINCT)], lambda x: np.minimum.reduce(x, initial=5.0)),
        row("initial", np.fmax.reduce, [((3, 4), DISTINCT)], lambda x: np.fmax.reduce(x, axis=1, initial=-0.05)),
        row("initial", np.logaddexp.reduce, [((3, 4), (-2, 2))], lambda x: np.logaddexp.reduce(x, initial=0.5)),
        row("where", np.add.reduce, [((3, 4), (-1, 1))], lambda x: np.add.reduce(x, axis=1, where=MASK)),
        row("where", np.multiply.reduce, [((3, 4), (0.5, 1.5))], lambda x: np.multiply.reduce(x, where=MASK)),
        row("where keepdims", np.multiply.reduce, [((3, 4), (0.5, 1.5))],
            lambda x: np.multiply.reduce(x, axis=1, keepdims=True, where=MASK, initial=2.0)),
        row("where initial", np.maximum.reduce, [((3, 4), DISTINCT)],
            lambda x: np.maximum.reduce(x, axis=1, where=MASK, initial=-5.0)),
        row("where initial", np.fmin.reduce, [((3, 4), DISTINCT)], lambda x: np.fmin.reduce(x, where=MASK, initial=5.0)),
        row("where", np.logaddexp.reduce, [((3, 4), (-2, 2))], lambda x: np.logaddexp.reduce(x, axis=None, where=MASK)),
        row("where", np.logaddexp2.reduce, [((3, 4), (-2, 2))], lambda x: np.logaddexp2.reduce(x, axis=1, where=MASK)),
        row("dtype", np.add.reduce, [((3, 4), (-1, 1))], lambda x: np.add.reduce(x, axis=1, dtype=np.float64)),
        row("dtype", np.multiply.reduce, [((3, 4), (0.5, 1.5))], lambda x: np.multiply.reduce(x, dtype=np.float64)),
        row("dtype", np.logaddexp.reduce, [((3, 4), (-2, 2))], lambda x: np.logaddexp.reduce(x, dtype=np.float64)),
        row("a constant beside", np.add.reduce, [((3, 4), (-1, 1))], lambda x: np.add.reduce(x * C4 + C4)),
        row("traced where", np.add.reduce, [((3, 4), DISTINCT)], lambda x: np.add.reduce(x, axis=1, where=x > 0)),
        row("traced where", np.maximum.reduce, [((3, 4), DISTINCT)],
            lambda x: np.maximum.reduce(x, where=x < 0.5, initial=-2.0)),
    ]
    # a traced initial= gets its gradient: added, multiplied, picked where it wins, log-added
    for uf, domain, t in [(np.add, (-1, 1), (-1, 1)), (np.multiply, (0.5, 1.5), (0.5, 1.5)),
                          (np.maximum, DISTINCT, (0.02, 0.07)), (np.minimum, DISTINCT, (-0.07, -0.02)),
                          (np.fmax, DISTINCT, (0.02, 0.07)), (np.fmin, DISTINCT, (-0.07, -0.02)),
                          (np.logaddexp, (-2, 2), (-1, 1)), (np.logaddexp2, (-2, 2), (-1, 1))]:
        rows.append(row("traced initial", uf.reduce, [((3, 4), domain), ((), t)],
                        lambda x, t, fn=uf.reduce: fn(x, axis=1, initial=t)))
    return rows


def _accumulate_rows():
    rows = []
    for uf, domain in SCAN_DOMAINS.items():
        fn = uf.accumulate
        rows += [
            row("axis 0 by default", fn, [((4, 3), domain)], lambda x, fn=fn: fn(x)),
            row("axis=1", fn, [((3, 5), domain)], lambda x, fn=fn: fn(x, axis=1)),
            row("axis=1 of three", fn, [((2, 4, 3), domain)], lambda x, fn=fn: fn(x, axis=1)),
            row("axis=-1", fn, [((2, 6), domain)], lambda x, fn=fn: fn(x, axis=-1)),
            row("vector", fn, [((7,), domain)], lambda x, fn=fn: fn(x)),
        ]
    rows += [
        row("dtype", np.add.accumulate, [((3, 4), (-1, 1))], lambda x: np.add.accumulate(x, dtype=np.float64)),
        row("dtype", np.multiply.accumulate, [((3, 4), (0.5, 1.5))],
            lambda x: np.multiply.accumulate(x, axis=1, dtype=np.float64)),
        row("vector axis=None", np.maximum.accumulate, [((6,), DISTINCT)], lambda x: np.maximum.accumulate(x, axis=None)),
        row("of length 1", np.logaddexp.accumulate, [((1, 3), (-2, 2))], lambda x: np.logaddexp.accumulate(x)),
        row("a constant beside", np.maximum.accumulate, [((4, 3), DISTINCT)], lambda x: np.maximum.accumulate(x + C4[:3])),
    ]
    return rows


REDUCEAT_ROWS = [
    row("", np.add.reduceat, [((6,), (-1, 1))], lambda x: np.add.reduceat(x, [0, 2, 3])),
    row("indices going back", np.add.reduceat, [((6,), (-1, 1))], lambda x: np.add.reduceat(x, [0, 4, 1, 5])),
    row("axis=1 repeated index", np.add.reduceat, [((3, 6), (-1, 1))], lambda x: np.add.reduceat(x, [0, 2, 2, 5], axis=1)),
    row("axis 0 of three", np.add.reduceat, [((5, 2, 3), (-1, 1))], lambda x: np.add.reduceat(x, np.array([1, 3]))),
    row("dtype", np.add.reduceat, [((4, 3), (-1, 1))], lambda x: np.add.reduceat(x, [0, 1], dtype=np.float64)),
]

#: (rule, argument shapes and intervals, function of the arguments going through the rule)
TABLE = _outer_rows() + _reduce_rows() + _accumulate_rows() + REDUCEAT_ROWS

EXERCISED = {p.values[0] for p in TABLE}


def make(rng, shape, domain, dtype=np.float64):
    if domain == DISTINCT:  # well apart, in a random order
        n = int(np.prod(shape))
        return rng.permutation(np.linspace(-1, 1, n)).reshape(shape).astype(dtype)
    return np.asarray(rng.uniform(*domain, size=shape)).astype(dtype)


def _order2_rows():
    """One row per rule: its first table row, as a scalar function of float64 arguments."""
    rng = np.random.default_rng(7)
    rows, seen = [], set()
    for p in TABLE:
        fn, specs, f = p.values
        if fn in seen:
            continue
        seen.add(fn)
        args = tuple(make(rng, shape, domain) for shape, domain in specs)
        rows.append((fn, (lambda *xs, f=f: np.sum(f(*xs) ** 2) / 2), args))
    return rows


#: (rule's function, f to differentiate twice, args at a smooth point): see test_higher_order.py
ORDER2 = _order2_rows()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn, specs, f", TABLE)
def test_rule(fn, specs, f, dtype, rng):
    """Each rule's gradient matches central differences in both modes, for float64 and float32."""
    check_grad(f, *[make(rng, shape, domain, dtype) for shape, domain in specs])


@pytest.mark.parametrize("fn, f, args", ORDER2, ids=lambda v: short_name(v) if ufunc_method(v) else "")
def test_second_order(fn, f, args):
    """The pullbacks are numpy code a Tracer records: second derivatives match central differences."""
    check_grad(lambda *xs: gradient(f, *xs)[0], *args)


def test_every_two_input_ufunc_with_a_rule_has_its_outer():
    """outer is registered for each elementwise two-input ufunc that has a rule, and the table
    drives each (a bound method is a new object at each access: the registry and the sets
    find it by equality)."""
    ufuncs = [f for f in RULES if isinstance(f, np.ufunc) and f.nin == 2 and f.signature is None]
    assert ufuncs and all(uf.outer in RULES and uf.outer in EXERCISED for uf in ufuncs)
    assert np.add.reduce is not np.add.reduce and np.add.reduce == np.add.reduce
    assert RULES[np.add.reduce] is RULES.get(getattr(np.add, "reduce"))
    assert np.matmul.outer not in RULES  # numpy refuses the methods of a gufunc


# --- closed forms ---


@pytest.mark.parametrize("kwargs", [{}, {"axis": 1}, {"axis": None}, {"axis": (0, 2), "keepdims": True},
                                    {"initial": 3.0}], ids=str)
def test_add_reduce_gradient_is_ones(kwargs, rng):
    """Σ of np.add.reduce(x) over its result is Σ x: the gradient is ones, whatever the axes."""
    x = rng.standard_normal((2, 3, 4))
    value, (_, dx) = grad(lambda x: np.sum(np.add.reduce(x, **kwargs)), x)
    np.testing.assert_array_equal(dx, np.ones_like(x))
    assert value == np.sum(np.add.reduce(x, **kwargs))


def test_pairwise_differences_weighted():
    """Σ W ∘ (x_i - x_j) has the gradient W.sum(1) - W.sum(0): x_i gains row i and loses column i."""
    W = np.arange(16.0).reshape(4, 4) ** 1.5
    x = np.array([0.3, -1.2, 2.5, 0.7])
    dx = gradient(lambda x: np.sum(W * np.subtract.outer(x, x)), x)[0]
    np.testing.assert_allclose(dx, W.sum(1) - W.sum(0), rtol=1e-14)


def test_multiply_outer_gradients_are_the_weighted_sums():
    """Σ W ∘ (a ⊗ b): ∂/∂a = W b, ∂/∂b = Wᵀ a."""
    W = np.arange(12.0).reshape(3, 4) - 5
    a, b = np.array([1.0, -2.0, 0.5]), np.array([0.25, 3.0, -1.0, 2.0])
    _, (_, da, db) = grad(lambda a, b: np.sum(W * np.multiply.outer(a, b)), a, b)
    np.testing.assert_allclose(da, W @ b, rtol=1e-14)
    np.testing.assert_allclose(db, W.T @ a, rtol=1e-14)


def _running_argmax_gradient(x, w):
    """Σ_j w_j · running max_j of x, differentiated by hand: w_j to the element holding the max."""
    dx, best = np.zeros_like(x), 0
    for j in range(len(x)):
        if x[j] > x[best]:
            best = j
        dx[best] += w[j]
    return dx


def test_maximum_accumulate_sends_each_cotangent_to_the_running_argmax():
    """Each output's cotangent goes to the element that is the running maximum at that point."""
    x = np.array([0.3, -1.0, 1.5, 0.2, 2.5, 2.4, -3.0])
    w = np.arange(1.0, 8.0)
    dx = gradient(lambda x: np.sum(w * np.maximum.accumulate(x)), x)[0]
    np.testing.assert_array_equal(dx, _running_argmax_gradient(x, w))
    np.testing.assert_array_equal(dx, [1.0 + 2.0, 0.0, 3.0 + 4.0, 0.0, 5.0 + 6.0 + 7.0, 0.0, 0.0])
    dm = gradient(lambda x: np.sum(w * np.minimum.accumulate(x)), x)[0]
    np.testing.assert_array_equal(dm, -_running_argmax_gradient(-x, -w))


def _unrolled_maximum(x):
    """np.maximum.accumulate written as the loop of np.maximum it stands for."""
    out = [x[0]]
    for j in range(1, len(x)):
        out.append(np.maximum(out[-1], x[j]))
    return np.stack(out)


@pytest.mark.parametrize("x", [np.array([1.0, 1.0, 0.5, 1.0, 2.0, 2.0]), np.array([0.0, 0.0, 0.0, 0.0]),
                               np.array([3.0, 1.0, 3.0, 2.0, 3.0, 4.0, 4.0])], ids=["ties", "all equal", "returns"])
def test_maximum_accumulate_ties_follow_the_rule_of_np_maximum(x):
    """At a tie x[j] == y[j-1] the cotangent is split as np.maximum's rule splits it, half to
    each: the gradient is exactly that of the loop y[j] = np.maximum(y[j-1], x[j])."""
    w = np.arange(1.0, 1.0 + len(x))
    dx = gradient(lambda x: np.sum(w * np.maximum.accumulate(x)), x)[0]
    np.testing.assert_array_equal(dx, gradient(lambda x: np.sum(w * _unrolled_maximum(x)), x)[0])
    assert np.sum(dx) == np.sum(w)  # every share arrives somewhere


def test_maximum_accumulate_ties_split_in_halves():
    """[1, 1, 0.5]: step 1 ties, half to each 1; step 2 passes its whole share to y[1], which splits it."""
    dx = gradient(lambda x: np.sum(np.maximum.accumulate(x)), np.array([1.0, 1.0, 0.5]))[0]
    np.testing.assert_array_equal(dx, [2.0, 1.0, 0.0])


def test_maximum_accumulate_along_an_axis_matches_each_column():
    """Along axis 0 of a matrix, each column is its own running maximum."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    dx = gradient(lambda x: np.sum(w * np.maximum.accumulate(x)), x)[0]
    for k in range(3):
        np.testing.assert_allclose(dx[:, k], _running_argmax_gradient(x[:, k], w[:, k]), rtol=1e-15)


def test_fmax_accumulate_skips_a_nan():
    """np.fmax ignores a nan: the running maximum and its cotangent stay with the element before it."""
    x = np.array([0.5, np.nan, 0.2, 1.0])
    dx = gradient(lambda x: np.sum(np.fmax.accumulate(x) * np.array([1.0, 2.0, 4.0, 8.0])), x)[0]
    np.testing.assert_array_equal(dx, [7.0, 0.0, 0.0, 8.0])
    dr = gradient(lambda x: np.fmax.reduce(x), x)[0]
    np.testing.assert_array_equal(dr, [0.0, 0.0, 0.0, 1.0])


def test_logaddexp_reduce_gradient_is_the_softmax(rng):
    """d/dx log Σ eˣ = softmax(x), along the axis reduced; the value is numpy's own."""
    x = rng.standard_normal((3, 5)) * 4
    y, (_, dx) = grad(lambda x: np.logaddexp.reduce(x, axis=1), x, seed=np.ones(3))
    assert np.array_equal(y, np.logaddexp.reduce(x, axis=1))
    np.testing.assert_allclose(dx, np.exp(x) / np.sum(np.exp(x), axis=1, keepdims=True), rtol=1e-13)
    d2 = gradient(lambda x: np.logaddexp2.reduce(x), x[:, 0])[0]
    np.testing.assert_allclose(d2, 2 ** x[:, 0] / np.sum(2 ** x[:, 0]), rtol=1e-13)


def test_logaddexp_accumulate_is_the_running_softmax(rng):
    """∂/∂x_i Σ_j w_j log Σ_{k≤j} e^x_k = Σ_{j≥i} w_j softmax of the first j+1 at i; no overflow
    where the values are large."""
    x, w = rng.standard_normal(6) * 300, rng.standard_normal(6)
    dx = gradient(lambda x: np.sum(w * np.logaddexp.accumulate(x)), x)[0]
    want = sum(w[j] * np.concatenate([np.exp(x[:j + 1] - np.logaddexp.reduce(x[:j + 1])), np.zeros(5 - j)])
               for j in range(6))
    np.testing.assert_allclose(dx, want, rtol=1e-12, atol=1e-300)


def test_multiply_reduce_and_accumulate_with_a_zero():
    """The product of the others, with no division: right where an element is 0."""
    x = np.array([2.0, 0.0, 3.0, 0.5])
    np.testing.assert_array_equal(gradient(lambda x: np.multiply.reduce(x), x)[0], [0.0, 3.0, 0.0, 0.0])
    np.testing.assert_array_equal(gradient(lambda x: np.sum(np.multiply.accumulate(x)), x)[0],
                                  gradient(lambda x: np.sum(np.cumprod(x)), x)[0])


def test_multiply_reduce_where_is_the_product_of_the_selected():
    """np.multiply.reduce(x, where=m) is np.prod(np.where(m, x, 1)): same value and gradient."""
    x = np.array([[2.0, -0.5, 3.0, 0.25], [1.5, 4.0, 0.0, -2.0], [0.5, 2.0, 1.0, 3.0]])
    f = lambda x: np.multiply.reduce(x, axis=1, where=MASK)  # noqa: E731
    g = lambda x: np.prod(np.where(MASK, x, 1.0), axis=1)  # noqa: E731
    w = np.array([1.0, -2.0, 0.5])
    assert np.array_equal(f(x), g(x))
    np.testing.assert_array_equal(gradient(lambda x: np.sum(w * f(x)), x)[0], gradient(lambda x: np.sum(w * g(x)), x)[0])


def test_add_reduceat_gradient_counts_each_segment():
    """Each element gets the cotangent of every segment it was summed into."""
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    dx = gradient(lambda x: np.sum(w * np.add.reduceat(x, [0, 4, 1, 5])), np.zeros(6))[0]
    # segments [0:4], [4] alone (4 > 1), [1:5], [5:]
    np.testing.assert_array_equal(dx, [1.0, 101.0, 101.0, 101.0, 110.0, 1000.0])


def test_values_are_numpys(rng):
    """Under a gradient each method returns numpy's own value, to the bit."""
    x = rng.standard_normal((4, 5))
    for f in (lambda x: np.add.reduce(x), lambda x: np.multiply.accumulate(x, axis=1),
              lambda x: np.subtract.outer(x[0], x[1]), lambda x: np.logaddexp.accumulate(x),
              lambda x: np.maximum.reduce(x, axis=None), lambda x: np.add.reduceat(x, [0, 2], axis=1)):
        value, _ = tapegrad.pullback(f, x)
        assert np.array_equal(value, f(x))


# --- names, the printed tape, compiled programs, forward mode, pickling ---


def test_names_of_a_method():
    """A ufunc's method prints as ufunc.method and is named by its importable path."""
    assert short_name(np.add.reduce) == "add.reduce"
    assert qualified_name(np.subtract.outer) == "numpy.subtract.outer"
    assert qualified_name(np.true_divide.outer) == "numpy.divide.outer"
    assert qualified_name(sp.xlogy.outer) == "scipy.special.xlogy.outer"
    assert type_str(np.maximum.accumulate) == "function maximum.accumulate"
    assert ufunc_method(np.add) is None and ufunc_method(len) is None and ufunc_method(np.sum) is None


def centred_energy(x):
    """A module-level function: pairwise squared distances summed per row, then over rows."""
    d = np.subtract.outer(x, x)
    return np.add.reduce(np.add.reduce(d * d, axis=1))


def test_printed_tape_names_the_methods():
    """trace shows each call of a ufunc's method as ufunc.method, with its options."""
    _, tape = trace(centred_energy, np.array([0.5, -1.0, 2.0]))
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function centred_energy\n"
        "  inp %2::float64[3]   # x\n"
        "  %3 = subtract.outer(%2, %2)::float64[3,3]\n"
        "  %4 = multiply(%3, %3)::float64[3,3]\n"
        "  %5 = add.reduce(%4, axis=1)::float64[3]\n"
        "  %6 = add.reduce(%5)::float64"
    )


def test_printed_gradient_tape_names_the_rules():
    """A gradient tape shows rrule(add.reduce, ...) and the pullbacks of the methods by name."""
    _, back = tapegrad.pullback(lambda x: np.maximum.accumulate(np.subtract.outer(x, 1.5 * x)), np.array([0.5, 2.0]))
    text = str(back.tape)
    assert "rr%4 = rrule(subtract.outer, %2, %3)::tuple" in text
    assert "::function subtract_outer_pullback" in text
    assert "rr%5 = rrule(maximum.accumulate, %4)::tuple" in text and "::function maximum_accumulate_pullback" in text


def test_generated_source_calls_the_methods():
    """A tape's Python source writes np.add.reduce(...) and np.subtract.outer(...), and runs."""
    x = np.array([0.5, -1.0, 2.0])
    _, tape = trace(centred_energy, x)
    src = tapegrad.program.to_source(tape, "f")
    assert "np.subtract.outer(x, x)" in src and "np.add.reduce(v4, axis=1)" in src
    assert tapegrad.program.compile_tape(tape, "f")(centred_energy, 2 * x) == centred_energy(2 * x)


def test_passes_share_and_keep_calls_of_the_methods():
    """cse takes two calls of np.add.reduce (two bound-method objects) as one; prune keeps a
    method's call that the result needs and drops one it does not (the methods are pure)."""
    _, tape = trace(lambda x: np.add.reduce(x) * np.add.reduce(x) + 0 * np.maximum.accumulate(x)[0],
                    np.arange(6.0).reshape(2, 3))
    shared = tapegrad.program.cse(tape)
    assert str(shared).count("add.reduce(%2)") == 1
    assert "maximum.accumulate" in str(tapegrad.program.prune(shared))
    _, tape = trace(lambda x: (np.subtract.outer(x, x), np.add.reduce(x))[1], np.arange(3.0))
    assert "subtract.outer" not in str(tapegrad.program.prune(tape))


@pytest.mark.parametrize("f", [centred_energy,
                               lambda x: np.sum(np.logaddexp.reduce(np.multiply.outer(x, x), axis=0)),
                               lambda x: np.sum(np.maximum.accumulate(x) * np.arange(3.0)),
                               lambda x: np.sum(np.add.reduceat(np.add.accumulate(x), [0, 2]) ** 2)],
                         ids=["subtract.outer add.reduce", "logaddexp.reduce", "maximum.accumulate", "reduceat"])
def test_compiled_grad_gives_grads_gradient(f):
    """compiled_grad's program (traced, optimized, compiled) gives grad's value and gradient."""
    x = np.array([0.5, -1.0, 2.0])
    g = compiled_grad(f, tiers=False)
    g(x)  # traced
    value, (_, dx) = g(x)  # the compiled program
    assert g.cache_info()["hits"] == 1
    want, (_, dwant) = grad(f, x)
    assert value == pytest.approx(want, rel=1e-14)
    np.testing.assert_allclose(dx, dwant, rtol=1e-13)
    value2, (_, dx2) = g(3 * x)  # run again on new values
    np.testing.assert_allclose(dx2, grad(f, 3 * x)[1][1], rtol=1e-13)


def test_compiled_grad_source_calls_the_method():
    """A rule that computes its value with the method leaves np.logaddexp.reduce(...) in the program."""
    x = np.array([0.5, -1.0, 2.0])
    g = compiled_grad(lambda x: np.logaddexp.reduce(x * x), tiers=False)
    g(x)
    assert "np.logaddexp.reduce(" in g.source(x)


def test_jvp_of_add_reduce():
    """Forward mode: the variation of np.add.reduce(x) is np.add.reduce of the variation (initial= not added)."""
    x, v = np.arange(6.0).reshape(2, 3), np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
    y, dy = jvp(lambda x: np.add.reduce(x), (x,), (v,))
    assert np.array_equal(y, x.sum(0)) and np.array_equal(dy, v.sum(0))
    _, dy = jvp(lambda x: np.add.reduce(x, axis=None, initial=5.0), (x,), (v,))
    assert dy == v.sum()
    # np.sum's forward rule, which add.reduce stands beside, leaves initial= out of the variation too
    assert jvp(lambda x: np.sum(x, initial=5.0), (x,), (v,))[1] == v.sum()
    assert jvp(lambda x: np.sum(x, None, None, None, False, 5.0), (x,), (v,))[1] == v.sum()
    assert jvp(lambda x, t: np.sum(x, initial=t), (x, 5.0), (v, 2.0))[1] == v.sum() + 2.0
    assert jvp(lambda x, t: np.add.reduce(x, axis=None, initial=t), (x, 5.0), (v, 2.0))[1] == v.sum() + 2.0
    _, dy = jvp(lambda x: np.add.accumulate(x, axis=1), (x,), (v,))
    assert np.array_equal(dy, np.cumsum(v, axis=1))


def test_jvp_of_the_derived_forward_rules(rng):
    """The methods without a forward rule of their own get one derived from the reverse rule."""
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    _, dy = jvp(lambda x: np.maximum.accumulate(x), (x,), (v,))
    np.testing.assert_array_equal(dy, v[[np.argmax(x[:j + 1]) for j in range(5)]])
    _, dy = jvp(lambda x: np.subtract.outer(x, x), (x,), (v,))
    np.testing.assert_allclose(dy, np.subtract.outer(v, v), rtol=1e-15)


def test_tape_of_the_methods_pickles_and_replays():
    """A tape holding calls of ufunc methods round-trips through pickle, prints the same and replays."""
    x = np.array([0.5, -1.0, 2.0])
    _, tape = trace(centred_energy, x)
    tape2 = pickle.loads(pickle.dumps(tape))
    assert str(tape2) == str(tape)
    assert tape2.replay(centred_energy, 2 * x) == centred_energy(2 * x)
    assert pickle.loads(pickle.dumps(np.add.reduce)) == np.add.reduce


def test_gradient_tape_of_the_methods_pickles_with_cloudpickle():
    """A pullback through the methods (closures in it) comes back whole through cloudpickle."""
    cloudpickle = pytest.importorskip("cloudpickle")
    x = np.array([0.5, -1.0, 2.0])
    _, back = tapegrad.pullback(lambda x: np.sum(np.maximum.accumulate(np.subtract.outer(x, x), axis=1)), x)
    want = back(1.0)
    back2 = pickle.loads(cloudpickle.dumps(back))
    assert str(back2.tape) == str(back.tape)
    np.testing.assert_array_equal(back2(2.0)[1], 2 * want[1])


def test_out_argument_is_written():
    """out= of a method: the result is written into the traced array, as numpy does."""
    def f(x):
        buf = np.zeros(3)
        np.add.reduce(x * x, axis=0, out=buf)
        return np.sum(buf * np.array([1.0, 2.0, 3.0]))

    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(gradient(f, x)[0], 2 * x * np.array([1.0, 2.0, 3.0]))


# --- what is refused ---


def test_reduce_of_another_ufunc_is_refused_naming_the_ones_supported():
    """np.subtract.reduce has no rule: the error names the call and the ufuncs whose reduce is differentiated."""
    with pytest.raises(NoRuleError) as info:
        grad(lambda x: np.subtract.reduce(x), np.arange(3.0))
    text = str(info.value)
    assert text.startswith("no rrule for numpy.subtract.reduce(%2::float64[3]) at test_ufunc_methods.py:")
    assert ("tapegrad differentiates the reduce method of numpy.add, numpy.fmax, numpy.fmin, numpy.logaddexp, "
            "numpy.logaddexp2, numpy.maximum, numpy.minimum and numpy.multiply only: write this one with "
            "numpy.subtract itself, applied step by step along the axis") in text
    assert "@tapegrad.rrule(numpy.subtract.reduce)" in text


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_reduceat_of_another_ufunc_is_refused(mode):
    """reduceat is differentiated for np.add only; another ufunc's raises NoRuleError (a NotImplementedError) naming it."""
    f = lambda x: np.maximum.reduceat(x, [0, 2])  # noqa: E731
    with pytest.raises(NotImplementedError, match=r"numpy\.maximum\.reduceat\(.*the reduceat method of numpy\.add only"):
        if mode == "rev":
            grad(lambda x: np.sum(f(x)), np.arange(4.0))
        else:
            jvp(f, (np.arange(4.0),), (np.ones(4),))


def test_outer_of_a_ufunc_without_a_rule_is_refused():
    """A ufunc with no rule has no outer rule either: the error says how to write the outer product."""
    # (every two-input ufunc of numpy has a rule now: one is taken away for the test)
    with declarations_undone():
        del RULES[np.nextafter.outer]
        with pytest.raises(NoRuleError, match=r"numpy\.nextafter\.outer.*np\.reshape\(a, np\.shape\(a\) \+ \(1,\) \* np\.ndim\(b\)\)"):
            grad(lambda x: np.sum(np.nextafter.outer(x, x)), np.arange(3.0))


def test_traced_where_mask_and_initial_are_taken():
    """numpy hands a method's options by keyword; a traced where= or initial= is moved into its
    place (numpy takes them by position too), so the mask selects and initial gets its gradient."""
    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(gradient(lambda x: np.add.reduce(x, where=x > 0), x)[0], [1.0, 0.0, 1.0])
    _, tape = trace(lambda x, t: np.add.reduce(x, where=x > 0, initial=t), x, 2.0)
    assert str(tape).endswith("%5 = add.reduce(%2, where=%4, initial=%3)::float64")
    _, tape = trace(lambda x, t: np.add.reduce(x, where=x > 0, initial=t), x, 2.0, ctx=GradContext())
    assert "%5 = rrule(add.reduce, %2, 0, None, None, False, %3, %4)::tuple" in str(tape)
    assert gradient(lambda x, t: np.add.reduce(x, initial=t), x, 2.0) == (pytest.approx([1.0, 1.0, 1.0]), 1.0)
    # initial wins where it is above every element: there, and only there, it gets the cotangent
    m = np.array([[0.5, 1.5], [0.2, 0.1]])
    w = np.array([3.0, 5.0])
    dm, dt = gradient(lambda m, t: np.sum(w * np.maximum.reduce(m, axis=1, initial=t)), m, 1.0)
    np.testing.assert_array_equal(dm, [[0.0, 3.0], [0.0, 0.0]])
    assert dt == 5.0
    # a float captured by a closure is traced too: it is differentiated, not refused
    c = 2.0
    assert grad(lambda x: np.logaddexp.reduce(x, initial=c), x)[1][0].c == pytest.approx(
        np.exp(c - np.logaddexp.reduce(x, initial=c)))
    # (numpy asks the arrays, not initial=, about the call: the array must be traced or dual too)
    _, dy = jvp(lambda x, t: np.add.reduce(x, axis=None, initial=t), (x, 2.0), (np.ones(3), 1.5))
    assert dy == 4.5


def test_dtype_of_an_extremum_is_refused():
    """np.maximum.reduce with dtype= is refused with the cast to write instead."""
    with pytest.raises(NoRuleError, match=r"numpy\.maximum\.reduce with dtype=.*x\.astype\(dtype\)"):
        grad(lambda x: np.maximum.reduce(x, dtype=np.float32), np.arange(3.0))


def test_axis_errors_are_numpys():
    """An accumulation over several axes or of a scalar raises numpy's own error."""
    with pytest.raises(ValueError, match="accumulate does not allow multiple axes"):
        grad(lambda x: np.sum(np.add.accumulate(x, axis=None)), np.ones((2, 2)))
    with pytest.raises(TypeError, match="cannot accumulate on a scalar"):
        grad(lambda x: np.maximum.accumulate(x), np.array(2.0))


def test_methods_of_nondifferentiable_ufuncs_are_nondifferentiable():
    """np.greater.outer and np.logical_and.reduce are piecewise constant: the gradient stops there."""
    x = np.array([0.5, -1.0, 2.0])
    for fn in (np.greater.outer, np.logical_and.reduce, np.equal.accumulate, np.bitwise_or.reduceat,
               np.floor_divide.outer):
        assert fn in NONDIFF and fn not in RULES
    # a reduction passes a group of one through: np.floor_divide.reduce of a float array is not
    # piecewise constant, so it is refused rather than given a zero derivative
    assert np.floor_divide.reduce not in NONDIFF
    with pytest.raises(NoRuleError, match=r"numpy\.floor_divide\.reduce"):
        grad(lambda x: np.sum(np.floor_divide.reduce(x, axis=1)), np.ones((2, 1)))
    assert grad(lambda x: np.sum(np.greater.outer(x, x) * 1.0), x)[1][1] is ZERO
    dx = gradient(lambda x: np.sum(np.less.outer(x, x) * np.subtract.outer(x, x)), x)[0]
    # Σ [x_i < x_j] (x_i - x_j): x_i gains one per larger element and loses one per smaller
    np.testing.assert_array_equal(dx, [0.0, 2.0, -2.0])
    assert grad(lambda x: np.logical_or.reduce(x > 0) * 1.0, x)[1][1] is ZERO


def test_direct_call_of_a_rule_takes_the_options_by_position():
    """rrule(np.add.reduce, x, 1) binds numpy's signature: one NoTangent for the axis."""
    x = np.arange(6.0).reshape(2, 3)
    y, back = tapegrad.rrule(np.add.reduce, x, 1)
    assert np.array_equal(y, x.sum(1))
    out = back(np.array([1.0, 2.0]))
    assert len(out) == 3 and out[2] is tapegrad.NO_TANGENT
    np.testing.assert_array_equal(out[1], [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])


# --- complex values (autograd's convention: tests/rules/_complex.py) ---


def cvalues(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def crow(label, fn, *args, wrt=None, **kwargs):
    return pytest.param(fn, args, kwargs, wrt, id=f"{short_name(fn)} {label}".strip())


def _complex_table():
    rng = np.random.default_rng(31)
    z3, z4, z34 = cvalues(rng, (3,)), cvalues(rng, (4,)), cvalues(rng, (3, 4))
    right = 2.0 + cvalues(rng, (4,)) * 0.3  # away from the branch cut of power
    rows = [crow("", uf.outer, z3, z4) for uf in (np.add, np.subtract, np.multiply, np.maximum, np.minimum,
                                                   np.fmax, np.fmin)]
    rows += [
        crow("", np.divide.outer, z3, right),
        crow("", np.power.outer, right[:3], z4 * 0.5),
        crow("", np.float_power.outer, right[:3], z4 * 0.5),
        crow("real second", np.multiply.outer, z34, rng.standard_normal(2)),
        crow("", np.add.reduce, z34),
        crow("axis=1 initial", np.add.reduce, z34, axis=1, initial=1 - 2j),
        crow("", np.multiply.reduce, z34),
        crow("axis=None", np.multiply.reduce, z34 * 0.8, axis=None),
        crow("", np.add.accumulate, z34, axis=1),
        crow("", np.multiply.accumulate, z34),
        crow("", np.maximum.reduce, z34, axis=1),
        crow("", np.minimum.reduce, z34),
        crow("", np.add.reduceat, cvalues(rng, (6,)), [0, 4, 1], wrt=[0]),
    ]
    rows += [crow("real x", uf.outer, HANKEL_ORDERS, rng.uniform(0.5, 4, 4), wrt=[1]) for uf in HANKEL]
    return rows


COMPLEX_TABLE = _complex_table()


test_complex_rule_pullback, test_complex_rule_jvp = complex_table_tests(COMPLEX_TABLE)


def test_complex_rules_are_declared():
    """The methods declared for complex values are those the complex table checks, and no other."""
    declared = {fn for fn in COMPLEX if getattr(RULES.get(fn), "__module__", None) == "tapegrad.rules.ufunc_methods"}
    assert declared == {p.values[0] for p in COMPLEX_TABLE}


def test_complex_value_reaching_a_real_method_is_refused():
    """np.maximum.accumulate is not declared for complex values: refused, as any such rule."""
    with pytest.raises(tapegrad.ComplexValueError, match=r"numpy\.maximum\.accumulate"):
        grad(lambda x: np.sum(np.real(np.maximum.accumulate(x * (1 + 1j)))), np.array([0.5, 1.0]))


#: (rule, function of real arrays through the rule on complex values, shapes of the arrays)
COMPLEX_ORDER2 = [
    (np.multiply.outer, lambda x, y: power(np.multiply.outer(complex_of(x, y), complex_of(y, x))), [(3,), (3,)]),
    (np.add.reduce, lambda x, y: power(np.add.reduce(complex_of(x, y) ** 2, axis=1)), [(2, 3), (2, 3)]),
    (np.multiply.accumulate, lambda x, y: power(np.multiply.accumulate(complex_of(x, y))), [(4,), (4,)]),
]


@pytest.mark.parametrize("fn, f, shapes", COMPLEX_ORDER2, ids=lambda v: short_name(v) if ufunc_method(v) else "")
def test_complex_rule_second_order(fn, f, shapes, rng):
    """Second derivatives through a real parametrization match central differences (reverse over reverse)."""
    check_grad(f, *[rng.uniform(0.3, 1.5, s) * np.sign(rng.standard_normal(s)) for s in shapes],
               order=2, modes=("rev",))
