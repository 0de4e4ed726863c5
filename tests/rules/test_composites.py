"""numpy's composite functions on traced values: traced through (tapegrad/rules/composites.py,
linalg_composites.py, nanreductions.py) with numpy's values, and derivatives that match central
differences to second order in both modes; np.bincount's rule (a scatter-add of its weights)."""
import warnings

import numpy as np
import pytest

from _rule_tables import label
from tapegrad import ZERO, check_grad, grad, gradient, trace

_rng = np.random.default_rng(3)
v = _rng.uniform(0.5, 1.5, 4)
A = _rng.normal(size=(2, 3))
M = _rng.normal(size=(3, 3)) + 3 * np.eye(3)
T = _rng.normal(size=(6, 6)) + 4 * np.eye(6)
ix = np.array([0, 2, 2, 1])
#: nan entries of the nan-reductions' argument (fixed: the derivative is taken in the others)
NAN = np.zeros((3, 4), bool)
NAN[0, 1] = NAN[2, 3] = True
X = _rng.uniform(0.5, 1.5, (3, 4))


def with_nans(f):
    return lambda x: f(np.where(NAN, np.nan, x))


#: (label, f, args): each call goes through a traced-through function
TABLE = [
    ("meshgrid", lambda a, b: np.meshgrid(a, b)[0] * np.meshgrid(a, b)[1], (v, v[:3])),
    ("meshgrid ij sparse", lambda a, b, c: np.meshgrid(a, b, c, indexing="ij", sparse=True)[1] * 2, (v, v[:3], v[:2])),
    ("meshgrid 3 xy", lambda a, b, c: np.meshgrid(a, b, c)[2], (v, v[:3], v[:2])),
    ("broadcast_arrays", lambda a, b: np.broadcast_arrays(a, b[:, None])[1], (v, v[:3])),
    ("block", lambda a, b: np.block([[a, a], [b, b]]), (A, A * 2)),
    ("block 1d mixed", lambda a, b: np.block([[a], [b[:2]]]) , (v[:2], v)),
    ("block scalars", lambda a, m: np.block([[m, a[:, None]], [a[None, :], a[:1, None]]]), (v[:3], M)),
    ("vander", lambda x: np.vander(x, 3), (v,)),
    ("vander inc zero", lambda x: np.vander(x * np.array([0, 1, 1, 1]), increasing=True), (v,)),
    ("diagflat", lambda x: np.diagflat(x, -1), (A,)),
    ("ediff1d", lambda x: np.ediff1d(x, to_end=x[:2], to_begin=3.0), (A,)),
    ("ediff1d plain", lambda x: np.ediff1d(x), (v,)),
    ("delete", lambda x: np.delete(x, 1), (v,)),
    ("delete axis slice", lambda x: np.delete(x, slice(0, 2), axis=1), (A,)),
    ("delete bool", lambda x: np.delete(x, [True, False, True, False]), (v,)),
    ("insert", lambda x: np.insert(x, 1, x[0]), (v,)),
    ("insert list axis", lambda x, y: np.insert(x, [1, 3], y, axis=1), (A, v[:2, None])),
    ("insert scalar axis rows", lambda x, y: np.insert(x, 0, y, axis=0), (A, v[:3])),
    ("compress", lambda x: np.compress([1, 0, 1, 1], x), (v,)),
    ("compress axis traced", lambda x: np.compress(x[0] > 0, x, axis=1), (A,)),
    ("extract", lambda x: np.extract(x > 0.8, x), (v,)),
    ("resize", lambda x: np.resize(x, (2, 5)), (v,)),
    ("trim_zeros", lambda x: np.trim_zeros(x * np.array([0, 1, 1, 0.0])), (v,)),
    ("trim_zeros f", lambda x: np.trim_zeros(x * np.array([0, 1, 0, 1.0]), "f"), (v,)),
    ("trim_zeros 2d", lambda x: np.trim_zeros(x * np.array([[0, 1, 0.], [0, 1, 1]])), (A,)),
    ("choose", lambda x: np.choose([0, 1, 0, 1], [x, 2 * x]), (v,)),
    ("choose clip bcast", lambda x, y: np.choose(np.array([[0], [3]]), [x, y], mode="clip"), (v, 3.0)),
    ("sort_complex", lambda x: np.real(np.sort_complex(x)) * np.imag(np.sort_complex(x)) + np.real(np.sort_complex(x)), (v,)),
    ("logspace", lambda a, b: np.logspace(a, b, 4), (0.3, 1.2)),
    ("logspace base arr axis", lambda a, b: np.logspace(a, b, 3, base=[2.0, 3.0], axis=1), (v[:2], v[2:])),
    ("geomspace", lambda a, b: np.geomspace(a, b, 4), (0.3, 1.2)),
    ("geomspace neg noend", lambda a, b: np.geomspace(-a, -b, 4, endpoint=False), (v[:2], v[2:])),
    ("apply_over_axes", lambda x: np.apply_over_axes(np.sum, x, [0, 1]), (A,)),
    ("apply_over_axes mean", lambda x: np.apply_over_axes(np.mean, x, 1), (A,)),
    ("unwrap", lambda x: np.unwrap(x * 10), (v,)),
    ("unwrap axis period", lambda x: np.unwrap(x * 7, axis=0, period=4.0), (A,)),    # np.linalg
    *[(f"linalg.cond {p}", lambda a, p=p: np.linalg.cond(a, p), (M,))
      for p in [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf]],
    ("linalg.cond stacked", lambda a: np.linalg.cond(a), (np.stack([M, M.T + np.eye(3)]),)),
    ("linalg.tensorsolve", lambda a, b: np.linalg.tensorsolve(a, b), (T.reshape(2, 3, 6), A)),
    ("linalg.tensorsolve axes", lambda a, b: np.linalg.tensorsolve(a, b, axes=(0,)), (T.reshape(6, 2, 3), A)),
    ("linalg.tensorinv ind=1", lambda a: np.linalg.tensorinv(a, ind=1), (T,)),
    ("linalg.tensorinv", lambda a: np.linalg.tensorinv(a), (T.reshape(2, 3, 6),)),
    # nan-reductions, two entries nan
    ("nanvar", with_nans(np.nanvar), (X,)),
    ("nanvar axis ddof", with_nans(lambda x: np.nanvar(x, axis=1, ddof=1)), (X,)),
    ("nanvar keepdims", with_nans(lambda x: np.nanvar(x, axis=0, keepdims=True)), (X,)),
    ("nanstd", with_nans(lambda x: np.nanstd(x, axis=0)), (X,)),
    ("nanprod", with_nans(np.nanprod), (X,)),
    ("nanprod axis", with_nans(lambda x: np.nanprod(x, axis=1)), (X,)),
    ("nancumsum", with_nans(np.nancumsum), (X,)),
    ("nancumsum axis", with_nans(lambda x: np.nancumsum(x, axis=0)), (X,)),
    ("nancumprod axis", with_nans(lambda x: np.nancumprod(x, axis=1)), (X,)),
    ("nanmedian", with_nans(np.nanmedian), (X,)),
    ("nanmedian axis keepdims", with_nans(lambda x: np.nanmedian(x, axis=1, keepdims=True)), (X,)),
    # histograms of more than one axis, in their weights
    ("histogram2d weights", lambda w: np.histogram2d(X[0], X[1], bins=2, weights=w)[0], (v,)),
    ("histogram2d weights density", lambda w: np.histogram2d(X[0], X[1], bins=[2, 3], weights=w, density=True)[0], (v,)),
    ("histogram2d traced sample range", lambda x, w: np.histogram2d(x, X[1], 2, [[0, 2], [0, 2]], weights=w)[0], (X[0], v)),
    ("histogramdd weights", lambda w: np.histogramdd(X.T, bins=2, weights=w)[0], (v,)),
    ("histogramdd edges density", lambda w: np.histogramdd(X.T, bins=[np.array([0, 1.0, 2.0])] * 3, weights=w,
                                                           density=True)[0], (v,)),
    ("histogramdd on an edge", lambda w: np.histogramdd(np.array([[0.0, 1.0], [1.0, 0.5]]), bins=2, weights=w)[0],
     (v[:2],)),
]

#: np.bincount's rule, in its weights
ORDER2 = [
    (np.bincount, lambda w: np.bincount(ix, weights=w), (v,)),
    (np.bincount, lambda w: np.bincount(ix, w, 5), (v,)),
]
EXERCISED = {np.bincount}



@pytest.mark.parametrize("label, f, args", TABLE, ids=label)
def test_traced_through_gradient(label, f, args):
    """The function's derivatives match central differences to second order, in both modes."""
    check_grad(f, *args, order=2)


@pytest.mark.parametrize("label, f, args", TABLE, ids=label)
def test_traced_through_value_is_numpys(label, f, args):
    """Traced, the function gives numpy's own value, shape and dtype, and no warning numpy does not give."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, _ = trace(f, *args)
    expected = f(*args)
    assert np.shape(value) == np.shape(expected) and np.result_type(value) == np.result_type(expected)
    np.testing.assert_allclose(value, expected, rtol=1e-12)


def test_bincount_gathers_the_cotangent_of_each_weights_bin():
    """d/dwᵢ Σₖ cₖ·bincount(x, w)ₖ = c at xᵢ; without weights the counts carry no derivative."""
    c = np.array([1.0, 10.0, 100.0])
    assert gradient(lambda w: np.sum(c * np.bincount(ix, weights=w)), v)[0].tolist() == [1.0, 100.0, 100.0, 10.0]
    assert grad(lambda x: np.sum(np.bincount(np.argsort(x)) * 1.0), v)[1][1] is ZERO


def test_nan_entries_get_zero_derivative():
    """The nan entries of a nan-reduction's argument get 0, the others numpy's derivative."""
    g = gradient(with_nans(np.nanvar), X)[0]
    kept = X[~NAN]
    np.testing.assert_allclose(g[~NAN], 2 * (kept - kept.mean()) / kept.size)
    assert not g[NAN].any()


def test_vander_at_zero_has_no_nan():
    """vander's column of ones has derivative 0 at x = 0 (by products, not 0 · 0⁻¹ of x ** 0)."""
    g = gradient(lambda x: np.sum(np.vander(x, 3)), np.array([0.0, 2.0]))[0]
    np.testing.assert_array_equal(g, [1.0, 5.0])


def test_unwrap_derivative_is_one_across_a_jump():
    """unwrap adds whole periods, piecewise constant: d/dx Σ unwrap(x) is 1 for every element."""
    x = np.array([0.0, 3.0, 6.5, 1.0])
    np.testing.assert_array_equal(np.unwrap(x), trace(np.unwrap, x)[0])
    np.testing.assert_array_equal(gradient(lambda x: np.sum(np.unwrap(x) * [1.0, 2.0, 3.0, 4.0]), x)[0], [1, 2, 3, 4])


def test_meshgrid_tape_reads_as_numpys_steps():
    """np.meshgrid is recorded as numpy computes it: reshapes onto the axes, broadcasts, copies."""
    _, tape = trace(lambda a, b: np.meshgrid(a, b, copy=False)[1], v, v[:3])
    names = [getattr(op.fn, "__name__", "") for op in tape.ops if hasattr(op, "fn")]
    assert names == ["reshape", "reshape", "broadcast_to", "broadcast_to"]


def test_histogramdd_of_a_traced_sample_with_edges_from_its_values_is_refused():
    """Edges numpy takes from a traced sample's minimum and maximum would carry a derivative:
    refused, naming range= and bins=, rather than a gradient that leaves them out."""
    with pytest.raises(NotImplementedError, match=r"numpy.histogramdd of a traced sample at .*pass range="):
        gradient(lambda x: np.sum(np.histogram2d(x, X[1], weights=v)[0]), X[0])
