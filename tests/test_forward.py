"""tapegrad.forward: forward mode and higher derivatives; dual numbers, jvp, Jacobians, Hessians, grad of grad."""
import numpy as np
import pytest
import scipy.special

import tapegrad
from tapegrad.arraylike import added_at, updated
from tapegrad.rules.indexing import scatter_add
from tapegrad.scipy.linalg import solve_triangular
from tapegrad import Dual, NoRuleError, grad, gradient, hessian, hvp, jacobian, jvp
from tapegrad.forward import integer_valued

# the rule of jacobian's integer leaves, driven by the test below (tests/rules/test_coverage.py)
EXERCISED = {integer_valued}


def haaland(eps, D, Re):
    return 1 / (-1.8 * np.log10((eps / D / 3.7) ** 1.11 + 6.9 / Re)) ** 2


def haaland_ssa_forward(eps, D, Re):
    """The Haaland factor in SSA form, one primitive per line, as written by hand."""
    y1 = eps / D
    y2 = y1 / 3.7
    y3 = y2 ** 1.11
    y4 = 6.9 / Re
    y5 = y3 + y4
    y6 = np.log10(y5)
    y7 = -1.8 * y6
    y8 = y7 ** 2
    y9 = 1 / y8
    return y9, (y1, y2, y3, y4, y5, y6, y7, y8)


def haaland_ssa_backward(eps, D, Re):
    """The adjoint of haaland_ssa_forward, written by hand from the last line to the first."""
    y9, (y1, y2, y3, y4, y5, y6, y7, y8) = haaland_ssa_forward(eps, D, Re)
    b9 = 1.0
    b8 = b9 * (-1 / y8**2)
    b7 = b8 * 2 * y7
    b6 = b7 * -1.8
    b5 = b6 / (y5 * np.log(10))
    b3 = b5
    b4 = b5
    b2 = b3 * 1.11 * y2**0.11
    b1 = b2 / 3.7
    beps = b1 / D
    bD = -b1 * eps / D**2
    bRe = -b4 * 6.9 / Re**2
    return y9, (beps, bD, bRe)


def test_haaland_three_ways_agree():
    """Dual numbers, the hand-written SSA adjoint and grad agree to 1e-10, as the chapter checks."""
    args = (0.01, 1.0, 3000.0)
    value, hand = haaland_ssa_backward(*args)
    y, (_, *by_grad) = grad(haaland, *args)
    by_dual = []
    for i in range(3):
        tangents = [0.0, 0.0, 0.0]
        tangents[i] = 1.0
        yd, dy = jvp(haaland, args, tangents)
        assert yd == pytest.approx(value, rel=1e-12)
        by_dual.append(dy)
    assert y == pytest.approx(value, rel=1e-12)
    for h, g, d in zip(hand, by_grad, by_dual, strict=True):
        assert g == pytest.approx(h, rel=1e-10)
        assert d == pytest.approx(h, rel=1e-10)


def test_dual_solve(rng):
    """A\\b with A dual: value A\\b, variation -A\\(dA (A\\b)), from one factorization."""
    A = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    dA = rng.standard_normal((4, 4))
    b = rng.standard_normal(4)
    x = np.linalg.solve(Dual(A, dA), b)
    np.testing.assert_allclose(x.val, np.linalg.solve(A, b), rtol=1e-12)
    np.testing.assert_allclose(x.delta, -np.linalg.solve(A, dA @ np.linalg.solve(A, b)), rtol=1e-12)
    # and with b dual too, batched: dX = A⁻¹(dB - dA X)
    B, dB = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 4, 3))
    AA, dAA = np.stack([A, A.T]), np.stack([dA, dA.T])
    X = np.linalg.solve(Dual(AA, dAA), Dual(B, dB))
    np.testing.assert_allclose(X.delta, np.linalg.solve(AA, dB - dAA @ np.linalg.solve(AA, B)), rtol=1e-12)


@tapegrad.primitive
def thin_plate(r):
    # r² log|r| has a removable singularity at 0: value 0, derivative 0
    if r == 0:
        return 0.0 * r
    return r**2 * np.log(np.abs(r))


@tapegrad.frule(thin_plate)
def thin_plate_frule(d, r):
    (dr,) = d
    if r == 0:
        return 0.0 * r, 0.0 * dr
    return thin_plate(r), dr * (2 * r * np.log(np.abs(r)) + r)


@tapegrad.rrule(thin_plate)
def thin_plate_rrule(r):
    def thin_plate_pullback(dy):
        if r == 0:
            return tapegrad.NO_TANGENT, 0.0 * dy
        return tapegrad.NO_TANGENT, dy * (2 * r * np.log(np.abs(r)) + r)

    return thin_plate(r), thin_plate_pullback


@pytest.mark.parametrize("r, value, slope", [(0.0, 0.0, 0.0), (1.0, 0.0, 1.0), (2.0, 4 * np.log(2), 4 * np.log(2) + 2)])
def test_thin_plate_spline_with_user_rules(r, value, slope):
    """The thin-plate spline works at 0 (no nan from log 0) and at 1, in both modes."""
    assert jvp(thin_plate, (r,), (1.0,)) == (pytest.approx(value), pytest.approx(slope))
    assert grad(thin_plate, r)[1][1] == pytest.approx(slope)


def f34(x):
    return np.stack([x[0] * x[1], np.sin(x[2]), x[0] ** 2 + x[2], np.exp(x[1]) * x[2]])


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_jacobian_matches_finite_differences(mode, rng):
    """A 3 -> 4 Jacobian, one dual pass per input or one pullback per output."""
    x = rng.standard_normal(3)
    J = jacobian(f34, x, mode=mode)
    h = 1e-6
    fd = np.stack([(f34(x + h * e) - f34(x - h * e)) / (2 * h) for e in np.eye(3)], axis=-1)
    assert J.shape == (4, 3)
    np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-8)


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def test_hessian_of_rosenbrock_and_hvp():
    """The Hessian of Rosenbrock equals its closed form; hvp equals H @ v."""
    x = np.array([0.7, -0.3])
    H = hessian(rosenbrock, x)
    closed = np.array([[2 - 400 * (x[1] - 3 * x[0] ** 2), -400 * x[0]], [-400 * x[0], 200.0]])
    np.testing.assert_allclose(H, closed, rtol=1e-12)
    v = np.array([0.5, 2.0])
    np.testing.assert_allclose(hvp(rosenbrock, x, v), H @ v, rtol=1e-12)


def d(f):
    return lambda x: grad(f, x)[1][1]


@pytest.mark.parametrize("f, order, x, expected", [
    (np.sin, 2, 0.7, -np.sin(0.7)),
    (np.sin, 3, 0.7, -np.cos(0.7)),
    (lambda x: x**4, 3, 2.0, 48.0),
    (lambda x: np.exp(-x**2), 2, 0.5, (4 * 0.25 - 2) * np.exp(-0.25)),
    (lambda x: np.exp(-x**2), 3, 0.5, (12 * 0.5 - 8 * 0.125) * np.exp(-0.25)),
])
def test_higher_derivatives_by_nested_grad(f, order, x, expected):
    """grad of a function that calls grad: second and third derivatives in closed form."""
    g = f
    for _ in range(order):
        g = d(g)
    assert g(x) == pytest.approx(expected, rel=1e-12)


def test_second_derivative_of_an_mlp_loss_wrt_inputs(rng):
    """The Hessian of an MLP loss w.r.t. its input, three ways: nested grad, hessian, differences."""
    W1, b1 = rng.standard_normal((3, 5)), rng.standard_normal(5)
    W2 = rng.standard_normal(5)

    def loss(x):
        return np.sum(np.tanh(x @ W1 + b1) * W2) ** 2

    x = rng.standard_normal(3)
    H = hessian(loss, x)
    nested = np.stack([gradient(lambda x: gradient(loss, x)[0][i], x)[0] for i in range(3)])
    np.testing.assert_allclose(H, nested, rtol=1e-10)
    h = 1e-5
    fd = np.stack([(gradient(loss, x + h * e)[0] - gradient(loss, x - h * e)[0]) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(H, fd, rtol=1e-5, atol=1e-7)


def test_forward_rule_comes_from_the_reverse_rule():
    """A function with only a reverse rule still runs in forward mode (its rule is derived)."""
    @tapegrad.primitive
    def softplus(x):
        return np.log1p(np.exp(x)) if False else np.log(1 + np.exp(x))

    @tapegrad.rrule(softplus)
    def softplus_rrule(x):
        def softplus_pullback(dy):
            return tapegrad.NO_TANGENT, dy / (1 + np.exp(-x))

        return softplus(x), softplus_pullback

    y, dy = jvp(lambda x: softplus(x) * 2, (np.array([0.0, 1.0]),), (np.array([1.0, 1.0]),))
    np.testing.assert_allclose(dy, 2 / (1 + np.exp(-np.array([0.0, 1.0]))), rtol=1e-14)


def test_derived_forward_rule_reads_the_thunks_of_a_list_argument():
    """A reverse rule may give a list argument one Thunk per entry, which the sweep reads only
    for traced entries: the derived forward rule evaluates them as well, and only those of the
    entries that vary."""
    reads = []

    @tapegrad.primitive
    def weigh(x, ws):
        return x * (ws[0] + 2 * ws[1])

    @tapegrad.rrule(weigh)
    def weigh_rrule(x, ws):
        def weigh_pullback(dy):
            def entry(i, factor):
                def read():
                    reads.append(i)
                    return factor * np.sum(dy * x)
                return tapegrad.extend.Thunk(read)

            return tapegrad.NO_TANGENT, dy * (ws[0] + 2 * ws[1]), [entry(0, 1.0), entry(1, 2.0)]

        return weigh(x, ws), weigh_pullback

    x, dx = np.array([1.0, -2.0]), np.array([0.5, 0.25])
    y, dy = jvp(lambda x, w: weigh(x, [w, 3.0]), (x, 0.5), (dx, 2.0))
    np.testing.assert_allclose(dy, dx * 6.5 + x * 2.0, rtol=1e-15)
    assert reads == [0]
    y, dy = jvp(lambda w, v: weigh(x, [w, v]), (0.5, 3.0), (2.0, 0.5))
    np.testing.assert_allclose(dy, x * (2.0 + 2 * 0.5), rtol=1e-15)
    assert sorted(reads) == [0, 0, 1]


def _written_into_a_copy(x, c):
    y = x.copy()
    y[0, [0, 0]] = x[1, :2] ** 2  # (a repeated index: the last write wins)
    y[:, 1] = c
    np.add.at(y, (1, [2, 2]), x[0, 1:] * 3.0)
    return y


#: calls of the functions whose forward rules are written out (rules/_forward.py: joined and
#: multilinear, and np.where's), with a constant among the arguments where one fits: (f, args)
WRITTEN_OUT = [
    (lambda x, c: np.stack([x, 2.0 * np.ones(3), c], axis=1), (np.array([0.5, -1.0, 2.0]), np.arange(3.0))),
    (lambda x, c: np.stack((c, x)), (np.array([[0.5, -1.0], [1.5, 2.0]]), np.ones((2, 2)))),
    (lambda x, c: np.concatenate([c, x, x ** 2], axis=None), (np.array([[0.5, -1.0], [1.5, 2.0]]), np.ones(3))),
    (lambda x, c: np.concatenate((x, c), axis=-1), (np.array([[0.5, -1.0], [1.5, 2.0]]), np.ones((2, 1)))),
    (lambda x, c: np.einsum("ij,j,j->i", c, x, x), (np.array([0.5, -1.0, 2.0]), np.arange(6.0).reshape(2, 3))),
    (lambda x, c: np.einsum(c, [0, 1], x, [1], [0]), (np.array([0.5, -1.0, 2.0]), np.arange(6.0).reshape(2, 3))),
    (lambda x, c: np.einsum("ii->", np.outer(x, x)) + np.einsum("i,i", x, c), (np.array([0.5, -1.0, 2.0]), np.ones(3))),
    (lambda x, c: np.where(x > 0, x ** 2, 1.5), (np.array([0.5, -1.0, 2.0]), 0.0)),
    (lambda x, c: np.where(c > 1, c, np.sin(x)), (np.array([[0.5], [-1.0]]), np.arange(3.0) + 0.5)),
    # cholesky reads one triangle of a matrix that need not be symmetric: x varies both
    (lambda x, c: np.linalg.cholesky(c + np.outer(x, x ** 2)), (np.array([0.5, -1.0, 0.8]), 4.0 * np.eye(3))),
    (lambda x, c: np.linalg.cholesky(c + np.outer(x, x ** 2), upper=True),
     (np.array([0.5, -1.0, 0.8]), 4.0 * np.eye(3))),
    (lambda x, c: np.linalg.cholesky(c + x[:, None, None] * np.eye(2)), (np.array([0.5, 1.5]), np.ones((2, 2)))),
    # a ufunc's outer: its own forward rule on the first argument spread along the second's axes
    (lambda x, c: np.exp(-np.subtract.outer(x, c * x) ** 2), (np.array([[0.5, -1.0], [0.3, 2.0]]), 0.7)),
    (lambda x, c: np.multiply.outer(c, x) + np.multiply.outer(x[0], x), (np.array([0.5, -1.0, 2.0]), np.arange(2.0))),
    (lambda x, c: scipy.special.xlogy.outer(x, c + x ** 2), (np.array([0.5, 1.5]), np.array([1.0, 2.0]))),
    # linear in one argument (take, take_along_axis, scatter_add), in two together (a write
    # into a copy: updated, np.add.at's added_at), or in each apart (tensordot, axes positional)
    (lambda x, c: np.take(x, [2, 0, 2], axis=1) * np.take_along_axis(x, np.array([[1], [0]]), 1),
     (np.arange(6.0).reshape(2, 3) / 3, 0.0)),
    (lambda x, c: scatter_add(x ** 2, (2, 4), (slice(None), np.array([0, 3, 0])), np.float64),
     (np.arange(6.0).reshape(2, 3) / 3, 0.0)),
    (_written_into_a_copy, (np.arange(6.0).reshape(2, 3) / 3, np.array([1.5, -0.5]))),
    (lambda x, c: np.tensordot(x, c * x ** 2, ([0], [0])), (np.arange(6.0).reshape(2, 3) / 3, 0.5)),
    (lambda x, c: np.tril(np.outer(x, x), -1) + np.triu(np.outer(x, c)) + np.diag(x ** 2) + np.diag(np.outer(x, x), 1)[0],
     (np.array([0.5, -1.0, 2.0]), np.ones(3))),
    (lambda x, c: np.roll(x, 1, axis=1) * np.rollaxis(x[:, :, None] * c, 2, 0)[0], (np.arange(6.0).reshape(2, 3) / 3, 2.0)),
    (lambda x, c: np.tile(x, (2, 1))[1:3] + np.repeat(x, [1, 2], axis=0)[1:], (np.arange(6.0).reshape(2, 3) / 3, 0.0)),
    (lambda x, c: np.cross(x, c * x ** 2) + np.vdot(x, c + x) + np.convolve(x[0], x[1] ** 2)[:3]
     + np.correlate(x[0], c * x[1], "same"), (np.arange(6.0).reshape(2, 3) / 3 + 0.1, 1.5)),
    # a triangular solve reads one triangle (not its diagonal with unit_diagonal), maybe transposed
    (lambda x, c: solve_triangular(c + np.outer(x, x), x ** 2, lower=True)
     + solve_triangular(c + np.outer(x, x), x, trans="T", unit_diagonal=True),
     (np.array([0.5, -1.0, 2.0]), 3.0 * np.eye(3))),
    (lambda x, c: solve_triangular(c, np.outer(x, x[:2]), trans=1), (np.array([0.5, -1.0, 2.0]), np.triu(np.ones((3, 3))) + np.eye(3))),
    # complex cholesky keeps the derived rule (a Hermitian c and a real diagonal that varies)
    (lambda x, c: np.linalg.cholesky(c + np.diag(x ** 2)), (np.array([0.5, -1.0]), np.array([[3, 0.5j], [-0.5j, 3]]))),
    # the 2-norm and the Frobenius norm written out; ord=1 and the matrix 2-norm derived
    (lambda x, c: np.linalg.norm(x) + np.linalg.norm(x, axis=0) + np.linalg.norm(x, "fro", keepdims=True)
     + np.linalg.norm(x * c, ord=1, axis=1)[0] + np.linalg.norm(x, 2), (np.arange(6.0).reshape(2, 3) / 3 - 0.4, 1.5)),
]


@pytest.mark.parametrize("f, args", WRITTEN_OUT, ids=range(len(WRITTEN_OUT)))
def test_written_out_forward_rules_agree_with_the_derived_ones(f, args, monkeypatch):
    """np.stack, np.concatenate, np.einsum, np.where, np.linalg.cholesky (real), each ufunc's
    ``outer``, np.take, np.take_along_axis, np.tensordot, tapegrad's scatter and writes, the
    linear reshufflings (tril, triu, diag, roll, rollaxis, tile, repeat), the products cross,
    vdot, convolve and correlate, tapegrad.scipy.linalg.solve_triangular and the 2-norm and
    Frobenius norm of np.linalg.norm have forward rules of their own (forward
    mode through them was a traced pullback per call): the same variations as the rules derived
    from their reverse rules, of the result's dtype (float32 kept where f keeps it), and central
    differences to second order."""
    from tapegrad.registry import FRULES

    fns = (np.stack, np.concatenate, np.einsum, np.where, np.linalg.cholesky, np.subtract.outer,
           np.multiply.outer, scipy.special.xlogy.outer, np.take, np.take_along_axis, scatter_add,
           updated, added_at, np.tensordot, np.tril, np.triu, np.diag, np.roll, np.rollaxis, np.tile,
           np.repeat, np.cross, np.vdot, np.convolve, np.correlate, solve_triangular, np.linalg.norm)
    assert all(fn in FRULES for fn in fns)
    x, c = args
    v = np.cos(np.arange(np.size(x)) + 1.0).reshape(np.shape(x))
    written = jvp(lambda x: f(x, c), (x,), (v,))
    for fn in fns:
        monkeypatch.delitem(FRULES, fn)
    derived = jvp(lambda x: f(x, c), (x,), (v,))
    np.testing.assert_allclose(written[1], derived[1], rtol=1e-13, atol=1e-15)
    monkeypatch.undo()
    x32 = np.asarray(x, dtype=np.float32)
    c32 = np.asarray(c, dtype=np.complex64 if np.iscomplexobj(c) else np.float32)
    y32, dy32 = jvp(lambda x: f(x, c32), (x32,), (v.astype(np.float32),))
    assert dy32.dtype == y32.dtype  # float32, where f keeps it (not where it adds a float64 constant)
    tapegrad.check_grad(lambda x, _c=c: f(x, _c), x, order=2)  # (a default: c stays a constant)


def test_missing_forward_rule_names_the_function():
    """A numpy function with neither rule raises NoRuleError in forward mode, naming it."""
    # (np.histogram_bin_edges: a numpy function with no rule, which frexp was until it got one)
    with pytest.raises(NoRuleError, match=r"no forward rule for numpy.histogram_bin_edges.*@tapegrad.frule"):
        jvp(lambda x: np.histogram_bin_edges(x, 2)[0], (np.array([1.5, 2.0]),), (np.ones(2),))


def test_round_of_a_dual_value_is_its_value_rounded():
    """round(d) is the int of the rounded value (no variation, as for a traced value);
    round(d, n) is a dual value with the variation of np.round, zero."""
    y, dy = jvp(lambda x: x * round(x), (2.6,), (1.0,))
    assert (y, dy) == (2.6 * 3, 3.0)
    y, dy = jvp(lambda x: round(x * 3.0, 1) * x, (1.234,), (1.0,))
    assert dy == pytest.approx(3.7)


# --- structures: jvp, jacobian, hessian and hvp take and give what grad does ---

import dataclasses  # noqa: E402
from typing import NamedTuple  # noqa: E402

from tapegrad import Tangent, check_grad  # noqa: E402


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: float


class Pair(NamedTuple):
    a: np.ndarray
    b: float


def _energy(p):
    """A scalar of every structure: a dict of a list, a tuple, a NamedTuple and a dataclass."""
    (u, v), pair, layer = p["uv"], p["pair"], p["layer"]
    return (np.sum(u ** 2 * v) + np.sin(pair.b) * np.sum(pair.a ** 3)
            + np.sum(np.tanh(layer.w) * layer.b) + layer.b ** 3)


def _point():
    return {"uv": [np.array([0.5, -1.0]), 1.5], "pair": Pair(np.array([0.3, 0.7, -0.2]), 0.4),
            "layer": Layer(np.array([[0.1, -0.3], [0.6, 0.2]]), 1.2)}


def _direction():
    return {"uv": [np.array([1.0, 0.5]), -0.5], "pair": Pair(np.array([0.2, -1.0, 0.4]), 0.7),
            "layer": Layer(np.array([[0.3, 0.1], [-0.2, 0.5]]), -0.8)}


def _flat(p):
    """The float leaves of a point or of a tangent of one, in a fixed order, as one vector."""
    (u, v), pair, layer = p["uv"], p["pair"], p["layer"]
    return np.concatenate([np.ravel(u), [v], pair.a, [pair.b], np.ravel(layer.w), [layer.b]])


def _flat_hessian():
    """The Hessian of _energy over _flat's vector, by the array code path."""
    def of_vector(z):
        return _energy({"uv": [z[0:2], z[2]], "pair": Pair(z[3:6], z[6]), "layer": Layer(np.reshape(z[7:11], (2, 2)), z[11])})
    return hessian(of_vector, _flat(_point()))


def test_jvp_of_structured_arguments_and_result():
    """jvp takes a dict, list, NamedTuple and dataclass argument with a tangent of the same structure
    (a dataclass's tangent as the dataclass or as a Tangent) and gives a dict result its tangent as a dict."""
    f = lambda p: {"e": _energy(p), "parts": (p["uv"][0] * 2.0, p["pair"].b)}
    y, dy = jvp(f, (_point(),), (_direction(),))
    assert set(y) == {"e", "parts"} and type(y["parts"]) is tuple and type(dy["parts"]) is tuple
    assert type(y["e"]) is float and type(y["parts"][0]) is np.ndarray  # no dual value left in the result
    g = gradient(_energy, _point())[0]
    assert dy["e"] == pytest.approx(float(_flat(g) @ _flat(_direction())), rel=1e-12)
    np.testing.assert_array_equal(dy["parts"][0], 2.0 * _direction()["uv"][0])
    assert dy["parts"][1] == 0.7
    as_tangent = _direction()
    as_tangent["layer"] = Tangent(Layer, w=as_tangent["layer"].w, b=-0.8)
    assert jvp(f, (_point(),), (as_tangent,))[1]["e"] == dy["e"]


def test_jvp_of_constant_leaves_gives_zeros_of_their_shape():
    """A result leaf that does not depend on the input has a zero tangent of its own shape and dtype."""
    y, dy = jvp(lambda x: {"x": x, "c": np.ones((2, 3), np.float32), "n": 3.0}, (1.0,), (1.0,))
    assert dy["x"] == 1.0 and dy["n"] == 0.0
    assert dy["c"].shape == (2, 3) and dy["c"].dtype == np.float32 and not dy["c"].any()


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_hessian_of_a_structure_is_blocks_of_the_flat_hessian(mode):
    """hessian of a function of a structure: H[a][b] is the block of the flat Hessian for leaves a and b."""
    H = hessian(_energy, _point(), mode=mode)
    flat = _flat_hessian()
    assert type(H["pair"]) is Pair and type(H["uv"]) is list and type(H["layer"]) is Tangent
    np.testing.assert_allclose(H["uv"][0]["pair"].a, flat[0:2, 3:6], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(H["layer"].w["layer"].w, np.reshape(flat[7:11, 7:11], (2, 2, 2, 2)), rtol=1e-12)
    np.testing.assert_allclose(H["pair"].b["uv"][1], flat[6, 2], rtol=1e-12)
    assert np.shape(H["layer"].b["layer"].w) == (2, 2)


@pytest.mark.parametrize("mode", ["rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd"])
def test_hessian_of_a_structure_with_a_part_that_has_no_derivative(mode):
    """A dict holding a label (a string, its gradient NoTangent) and an empty dict: the label's
    row is zeros and its column NoTangent, in every mode (reverse over anything raised "flat_f
    returned ndarray, which has no derivative"); a function of an empty dict has the Hessian {}
    (it raised "need at least one array to concatenate")."""
    def f(p):
        return p["a"] ** 3 * np.sum(p["b"] ** 2) * (2.0 if p["n"] == "x" else 1.0)

    H = hessian(f, {"n": "x", "a": 0.7, "b": np.array([1.0, 2.0]), "e": {}}, mode=mode)
    assert list(H) == ["n", "a", "b", "e"] and H["e"] == {}
    assert all(H[k]["n"] is tapegrad.NO_TANGENT for k in ("n", "a", "b"))
    assert H["n"]["a"] == 0.0 and not H["n"]["b"].any()
    np.testing.assert_allclose(H["a"]["a"], 2 * 6 * 0.7 * 5.0, rtol=1e-14)
    np.testing.assert_allclose(H["a"]["b"], 2 * 3 * 0.7 ** 2 * 2 * np.array([1.0, 2.0]), rtol=1e-14)
    np.testing.assert_allclose(H["b"]["b"], 2 * 0.7 ** 3 * 2 * np.eye(2), rtol=1e-14)
    assert hessian(lambda p: 1.0, {}, mode=mode) == {}


@pytest.mark.parametrize("mode", ["rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd"])
def test_integer_leaves_reach_f_as_integers_that_vary(mode):
    """`jacobian` and `hessian` read a structure's leaves from one flat float vector: an int
    leaf reaches f as `integer_valued`, an int (a count, an index) that varies with its entry,
    as `grad` differentiates an int argument. (It reached f as a float: range() and indexing
    raised "is used as an index or count, but it is not an integer".)"""
    def f(p):
        y = p["x"] ** 2 * p["n"] ** 2
        for _ in range(p["n"]):
            y = y + p["xs"][p["i"]] * p["x"]
        return y

    p = {"x": 1.5, "n": 3, "xs": [0.5, 2.0], "i": 1}
    H = hessian(f, p, mode=mode)
    x, n = 1.5, 3
    assert H["x"]["x"] == pytest.approx(2 * n ** 2) and H["n"]["n"] == pytest.approx(2 * x ** 2)
    assert H["x"]["n"] == pytest.approx(4 * x * n) and H["n"]["x"] == pytest.approx(4 * x * n)
    assert H["x"]["xs"][1] == pytest.approx(n) and H["xs"][1]["x"] == pytest.approx(n)
    assert H["x"]["i"] == 0.0 and H["i"]["i"] == 0.0
    # the rule itself: n·x with n = integer_valued(x, 3) is x² at x = 3, in both modes and twice
    g = lambda x: integer_valued(x, 3) * x  # noqa: E731
    assert type(integer_valued(3.0, 3)) is int
    assert grad(g, 3.0)[1][1] == 6.0 and jvp(g, (3.0,), (1.0,))[1] == 6.0
    assert hessian(g, 3.0, mode=mode) == pytest.approx(2.0)


@pytest.mark.parametrize("power", [np.power, np.float_power])
def test_an_integer_exponent_is_a_count_in_both_modes(power):
    """x**n with an int n: reverse mode gives n no derivative (a count, as JAX sees it), and
    forward mode now agrees (it differentiated along n as along a float: 8·log 2); a float
    exponent has d/dn x**n = x**n log x in both."""
    assert jvp(lambda x, n: power(x, n), (2.0, 3), (0.0, 1.0))[1] == 0.0
    assert grad(lambda x, n: power(x, n), 2.0, 3)[1][2] == tapegrad.ZeroTangent()
    assert np.isclose(jvp(lambda x, n: power(x, n), (2.0, 3.0), (0.0, 1.0))[1], 8 * np.log(2), rtol=1e-15)
    assert np.isclose(grad(lambda x, n: power(x, n), 2.0, 3.0)[1][2], 8 * np.log(2), rtol=1e-15)
    assert np.isclose(jvp(lambda x, n: power(x, n), (2.0, 3), (1.0, 1.0))[1], 12.0, rtol=1e-15)


def test_hvp_reverse_over_reverse_of_a_structure_with_a_count():
    """An int in a dict used as a count (its gradient NoTangent): hvp(mode="rev-rev") pairs the
    gradient with v over the other leaves (it raised "unsupported operand type(s) for *:
    'NoTangent' and 'int'"), as the other modes do."""
    def f(p):
        x = p["x"]
        for _ in range(p["n"]):
            x = np.sin(x) + x
        return np.sum(x ** 2)
    p, v = {"x": np.array([0.3, 0.6]), "n": 2}, {"x": np.array([1.0, -1.0]), "n": 0}
    hv = hvp(f, p, v, mode="rev-rev")
    assert hv["n"] is tapegrad.NO_TANGENT
    np.testing.assert_allclose(hv["x"], hvp(f, p, v, mode="fwd-rev")["x"], rtol=1e-13)
    np.testing.assert_allclose(hv["x"], hessian(lambda x: f({"x": x, "n": 2}), p["x"]) @ v["x"], rtol=1e-13)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_hvp_of_a_structure(mode):
    """hvp of a structure along a direction of the same structure is H v, in the gradient's structure."""
    Hv = hvp(_energy, _point(), _direction(), mode=mode)
    assert type(Hv["pair"]) is Pair
    np.testing.assert_allclose(_flat(Hv), _flat_hessian() @ _flat(_direction()), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_jacobian_of_a_tuple_to_a_dict(mode):
    """jacobian of a tuple argument with a dict result: J[key][i] is d result[key] / d argument[i]."""
    f = lambda xy: {"p": xy[0] * xy[1], "s": np.sum(xy[0]) + xy[1] ** 2}
    x, y = np.array([1.0, 2.0, 3.0]), 0.5
    J = jacobian(f, (x, y), mode=mode)
    np.testing.assert_array_equal(J["p"][0], np.diag([0.5, 0.5, 0.5]))
    np.testing.assert_array_equal(J["p"][1], x)
    np.testing.assert_array_equal(J["s"][0], np.ones(3))
    assert float(J["s"][1]) == 1.0 and type(J["p"]) is tuple


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_hessian_modes_agree_on_arrays(mode, rng):
    """Forward over reverse and reverse over reverse give the closed-form Hessian of x·Ax/2 + sum sin x."""
    A = rng.standard_normal((4, 4))
    x = rng.standard_normal(4)
    H = hessian(lambda x: 0.5 * x @ A @ x + np.sum(np.sin(x)), x, mode=mode)
    np.testing.assert_allclose(H, 0.5 * (A + A.T) - np.diag(np.sin(x)), rtol=1e-12, atol=1e-14)


# --- nesting: every combination of modes sees tangents of the primal's shape ---


@pytest.mark.parametrize("fn", [np.abs, np.sinh, np.log1p, np.square, np.expm1, np.deg2rad])
def test_forward_over_forward_of_derived_rules(fn):
    """jvp of jvp through a rule derived from its reverse rule gives the second derivative elementwise,
    not a broadcast constant."""
    x = np.array([0.3, 0.9, 1.7])
    v = np.array([1.0, -2.0, 0.5])
    inner = lambda x: jvp(fn, (x,), (v,))[1]
    _, second = jvp(inner, (x,), (v,))
    h = 1e-5
    expected = (jvp(fn, (x + h * v,), (v,))[1] - jvp(fn, (x - h * v,), (v,))[1]) / (2 * h)
    np.testing.assert_allclose(second, expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f", [lambda x: x[1:] * x[0], lambda x: np.reshape(x, (2, 2)).T, lambda x: np.roll(x, 1) * x,
                               lambda x: np.concatenate([x[:1], x]) ** 2, lambda x: np.tril(np.outer(x, x)),
                               lambda x: np.einsum("i,i->i", x, x), lambda x: np.tensordot(x, x, 0)])
def test_forward_over_forward_of_reshaping_rules(f):
    """Rules that index or reshape their tangent work when the tangent is itself dual, and are right."""
    check_grad(lambda x: np.sum(jvp(f, (x,), (np.ones(4),))[1] * np.arange(1.0, 1 + np.size(f(x))).reshape(np.shape(f(x)))),
               np.array([0.4, -1.1, 0.8, 1.5]))


@pytest.mark.parametrize("fn", [np.ceil, np.floor, np.sign])
def test_reverse_over_forward_of_a_nondifferentiable_result(fn):
    """The tangent of a piecewise-constant array result is zeros of its shape, in every nesting."""
    x = np.array([0.3, -0.9, 1.7])
    _, dy = jvp(fn, (x,), (np.ones(3),))
    assert np.shape(dy) == (3,) and not np.any(dy)
    assert not np.any(gradient(lambda x: np.sum(jvp(fn, (x,), (np.ones(3),))[1] * x), x)[0])


def test_grad_of_jvp_inside_a_trace_is_the_second_derivative():
    """A dual number made inside a traced function handles its calls (reverse over forward), even
    next to values of the trace: d/dx of sinc'(x) through np.where(x == 0, ...) in sinc's rule."""
    d1 = lambda x: gradient(np.sinc, x)[0]
    d2 = lambda x: jvp(d1, (x,), (1.0,))[1]
    h = 1e-5
    assert gradient(d2, 0.7)[0] == pytest.approx((d2(0.7 + h) - d2(0.7 - h)) / (2 * h), rel=1e-7)


def test_nested_jvp_keeps_its_variation_apart_from_the_outer_one():
    """A jvp inside a function that jvp differentiates, closing over the outer dual value: the
    inner tangent is d/dx (a x²) = 2 a x and its outer derivative in a is 2x (no perturbation confusion)."""
    inner = lambda a: jvp(lambda x: a * x ** 2, (3.0,), (1.0,))[1]
    assert jvp(inner, (2.0,), (1.0,)) == (12.0, 6.0)
    constant = lambda a: jvp(lambda x: a + 0.0 * x, (3.0,), (1.0,))
    assert jvp(constant, (2.0,), (1.0,)) == ((2.0, 0.0), (1.0, 0.0))
    assert gradient(inner, 2.0) == (6.0,)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_hessian_through_dict_methods(mode):
    """A loss that reads its dict of parameters with get, items, keys and values has the closed-form
    Hessian in both modes (forward over reverse runs the gradient's dict reads on dual values)."""
    def loss(p):
        total = np.sum(p.get("w") ** 2 * p["b"])
        for k, v in p.items():
            total = total + np.sum(np.sin(v)) * (k == "w")
        return total + sum(np.sum(v ** 3) for v in p.values()) * len(list(p.keys()))

    w, b = np.array([0.3, -1.2]), np.array([0.8, 0.5])
    H = hessian(loss, {"w": w, "b": b}, mode=mode)
    np.testing.assert_allclose(H["w"]["w"], np.diag(2 * b - np.sin(w) + 12 * w), rtol=1e-12)
    np.testing.assert_allclose(H["w"]["b"], np.diag(2 * w), rtol=1e-12)
    np.testing.assert_allclose(H["b"]["w"], np.diag(2 * w), rtol=1e-12)
    np.testing.assert_allclose(H["b"]["b"], np.diag(12 * b), rtol=1e-12)


# --- complex values: autograd's convention (the README's "Complex numbers") ---


def test_jvp_of_complex_values():
    """A holomorphic f: f'(z)·v; |z|² (not holomorphic): 2 Re(z̄ v); a real x into complex values."""
    z, v = 1 + 2j, 0.3 - 0.5j
    y, dy = jvp(np.sin, (z,), (v,))
    assert y == pytest.approx(np.sin(z)) and dy == pytest.approx(np.cos(z) * v)
    assert jvp(lambda z: np.abs(z) ** 2, (z,), (v,))[1] == pytest.approx(2 * np.real(np.conj(z) * v))
    assert jvp(lambda t: np.exp(1j * t), (0.3,), (2.0,))[1] == pytest.approx(2j * np.exp(0.3j))
    # derived forward rules (from the reverse ones) pair cotangents and variations as Re Σ a·b
    assert jvp(np.arcsinh, (z,), (v,))[1] == pytest.approx(v / np.sqrt(z * z + 1))
    assert jvp(np.angle, (z,), (v,))[1] == pytest.approx(np.imag(v / z))


def test_jacobian_of_complex_values():
    """A complex result of a real x: df/dx in both modes; a complex x needs holomorphic=True
    (then df/dz, the same in both modes), else it is refused."""
    x = np.array([0.3, 0.7])
    want = np.diag(1j * np.exp(1j * x))
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(jacobian(lambda x: np.exp(1j * x), x, mode=mode), want)
    z = np.array([1 + 2j, 0.5 - 0.3j])
    (a, b), f = z, (lambda z: z ** 2 * z[::-1])  # (a² b, b² a)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(jacobian(f, z, mode=mode, holomorphic=True),
                                   [[2 * a * b, a * a], [b * b, 2 * a * b]])
    with pytest.raises(tapegrad.ComplexValueError, match=r"^the Jacobian taken at test_forward\.py:\d+ is with "
                       r"respect to a complex complex128\[2\]: .* pass holomorphic=True if it is"):
        jacobian(np.sin, z)


def test_hvp_of_a_real_function_of_complex_values_agrees_in_both_modes():
    """H v is the gradient of Re Σ grad f·v: equal to the derivative of the gradient along v."""
    z = np.array([1 + 2j, 0.5 - 0.3j])
    v = np.array([0.2 + 1j, -1 + 0.5j])
    f = lambda z: np.sum(np.abs(z) ** 4 + np.real(z) * np.imag(z) ** 2)  # noqa: E731
    h = 1e-6
    want = (gradient(f, z + h * v)[0] - gradient(f, z - h * v)[0]) / (2 * h)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(hvp(f, z, v, mode=mode), want, rtol=1e-6)
    with pytest.raises(tapegrad.ComplexValueError, match=r"^the Hessian taken at test_forward\.py:\d+ is with "
                       r"respect to a complex complex128\[2\]: .*use hvp\(f, x, v\)"):
        hessian(f, z)


@pytest.mark.parametrize("x, t", [(1.0, 1j), (np.ones(2), np.array([1.0, 1j])), ({"a": np.ones(2)}, {"a": np.ones(2) * 1j})])
def test_a_complex_tangent_of_a_real_value_is_refused(x, t):
    """jvp refuses to move a real value along a complex direction, saying what to pass instead."""
    with pytest.raises(ValueError, match=r"the tangent of argument 0(\[.a.\])? is complex for a real value; pass a real tangent"):
        jvp(lambda x: x, (x,), (t,))


@pytest.mark.parametrize("x, t, where", [(3, None, r"argument 1"), (np.ones(2), None, r"argument 1"),
                                         ({"w": np.ones(2)}, {"w": None}, r"argument 1\['w'\]")])
def test_a_none_tangent_is_refused_with_the_way(x, t, where):
    """None as a tangent (for an argument that should not move) is refused naming it and what to
    pass; it crashed inside a rule (None * float) or was taken for a tangent of shape ()."""
    with pytest.raises(TypeError, match=rf"^the tangent of {where} is None: pass a tangent of its shape and "
                                        r"type, or tapegrad\.ZERO \(or zeros\) where it does not move$"):
        jvp(lambda a, b: np.sum(a * 2.0) + np.sum(b["w"] if isinstance(b, dict) else b), (np.ones(2), x),
            (np.ones(2), t))
    assert jvp(lambda a, n: np.sum(a ** 2) * n, (np.ones(2), 3), (np.ones(2), tapegrad.ZERO)) == (6.0, 12.0)
