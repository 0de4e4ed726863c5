"""Programs written the way scientists write them, as cases of the conformance layer.

Each uses numpy as people do: literals of traced values, preallocated buffers filled in a
loop, views and slices, containers of parameters, control flow on traced values, closures,
names bound from numpy at import. The conformance layer runs each through every entry point.
"""
import dataclasses

import numpy as np

from tapegrad.extend import register_structure


@dataclasses.dataclass
class Case:
    """A function and the point it is differentiated at; `refuses` maps an entry point that
    refuses the case by design to (the error it raises, a regex its message matches)."""

    id: str
    f: object
    args: tuple
    refuses: dict = dataclasses.field(default_factory=dict)
    #: what seeds the case's random directions (its id unless given): a table row's place in its
    #: own module, so that rows added to other modules leave its directions as they were
    seed: str = ""


PROGRAMS = []


def _case(f, *args, refuses=None, id=None):
    PROGRAMS.append(Case(id or f.__name__, f, args, refuses or {}))
    return f


_rng = np.random.default_rng(31)
X3 = np.array([0.7, -0.4, 1.3])
Y3 = np.array([0.2, 0.9, -1.1])
A33 = _rng.standard_normal((3, 3)) + 3 * np.eye(3)
W1, B1 = 0.5 * _rng.standard_normal((4, 3)), 0.1 * _rng.standard_normal(4)
W2, B2 = 0.5 * _rng.standard_normal((2, 4)), 0.1 * _rng.standard_normal(2)


# --- literals and lists of traced values ---


def literal_of_traced_values(x):
    v = np.array([x[0] * x[1], np.sin(x[2]), 2.0])
    return np.sum(v ** 2)


_case(literal_of_traced_values, X3)


def nested_literal(a, b):
    m = np.array([[a, b], [b * a, 1.0]])
    return np.linalg.det(m)


_case(nested_literal, 0.8, -0.3)


def mean_of_a_list(a, b):
    return np.mean([a, b, a * b]) + np.std([a, b])


_case(mean_of_a_list, 0.8, -0.3)


def append_to_a_list(a, b):
    return np.sum(np.append([a, b], X3) ** 2)


_case(append_to_a_list, 0.8, -0.3)


def r_and_c(x, y):
    return np.sum(np.r_[x, y, 1.0] ** 2) + np.sum(np.c_[x, y] @ np.array([1.0, -2.0]))


_case(r_and_c, X3, Y3)


def array_and_asarray_of_traced(x):
    y = np.array(x)  # a copy, as numpy's
    y[0] = 3.0
    return np.sum(np.asarray(x) * y)


_case(array_and_asarray_of_traced, X3)


# --- preallocated buffers, views, in-place writes ---


def buffer_filled_in_a_loop(x, c):
    out = np.zeros(3)
    for i in range(3):
        out[i] = x[i] ** 2 + c * x[(i + 1) % 3]
    return np.sum(np.exp(out))


_case(buffer_filled_in_a_loop, X3, 0.5)


def explicit_euler(y0, k):
    ys = np.empty((5, 2))
    ys[0] = y0
    for i in range(4):
        y = ys[i]
        ys[i + 1] = y + 0.1 * np.array([y[1], -k * y[0]])
    return ys[-1]


_case(explicit_euler, np.array([1.0, 0.0]), 2.0)


def differences_and_views(x):
    d = x[1:] - x[:-1]
    y = x.copy()
    y[::2] *= 2.0
    return np.sum(d * y[:2]) + x.reshape(3, 1).T @ y


_case(differences_and_views, X3)


# --- containers of parameters ---


def mlp_dict(params, x):
    h = np.tanh(params["W1"] @ x + params["b1"])
    return np.sum((params["W2"] @ h + params["b2"]) ** 2)


_case(mlp_dict, {"W1": W1, "b1": B1, "W2": W2, "b2": B2}, X3)


def labelled_parameters(params, x):
    """A dict of parameters that holds a label (no derivative: its tangent is NoTangent, its
    row of a Hessian zeros, its column NoTangent)."""
    act = np.tanh if params["act"] == "tanh" else np.sin
    x = act(params["w"] * x) * params["scale"] + x
    return np.sum(act(params["w"] * x) ** 2)


_case(labelled_parameters, {"act": "tanh", "scale": 0.7, "w": np.array([0.3, -0.8])}, X3[:2])


def one_array_in_two_arguments(t, x):
    """The same array passed in a tuple and as an argument (and a None beside it): one leaf,
    whose gradient is the sum of both uses', reported in both places, at every order and in a
    compiled gradient (a gradient taken inside a trace gave each place its own use's part)."""
    return np.sum(t[0] * np.sin(x)) + (0.0 if t[1] is None else 1.0) + t[2] ** 2 * np.sum(x)


_SHARED = np.array([0.7, -0.4, 1.1])
_case(one_array_in_two_arguments, (_SHARED, None, 0.5), _SHARED)


def mlp_layers(layers, x):
    for W, b in layers:
        x = np.tanh(W @ x + b)
    return np.sum(x)


_case(mlp_layers, [(W1, B1), (W2, B2)], X3)


@dataclasses.dataclass
class Affine:
    weight: np.ndarray
    bias: float
    name: str = "affine"


def dataclass_model(model, x):
    return np.sum(np.sin(model.weight @ x) + model.bias)


_case(dataclass_model, Affine(W1, 0.3), X3)


# --- control flow on traced values ---


def branch_on_all(x):
    if np.all(x > -1.0):
        return np.sum(x ** 3)
    return np.sum(x)


_case(branch_on_all, X3)


def indicator_as_a_number(x):
    """A comparison made a float (an indicator, as in a penalty): a constant, guarded, as
    int() of a count is (float() of a traced bool was refused as if it dropped a gradient)."""
    return np.sum(x ** 2) * float(np.sum(x) > 0.5) + np.sum(np.sin(x)) * int(np.max(x) > 1.0)


_case(indicator_as_a_number, X3)


def an_index_and_a_count_among_the_arguments(xs, i, steps):
    """An int argument used as an index and one used as a count: `jacobian` and `hessian` of the
    tuple of the arguments pass them to f as integers (they were made floats of its flat
    vector: "is used as an index or count, but it is not an integer")."""
    y = xs[i] * xs[0]
    for _ in range(steps):
        y = np.sin(y) + xs[1]
    return y


_case(an_index_and_a_count_among_the_arguments, [0.3, 0.8, 1.1], 2, 2)


def an_int_argument_that_is_a_power_and_a_factor(x, n):
    """An int used as an exponent (a count: no derivative) and as a factor (a number: one): the
    layer gives it a zero tangent in jvp and hvp (it passed the int itself as its tangent, so
    forward mode moved n, which the differences never do)."""
    return np.sum(x ** n) * n


_case(an_int_argument_that_is_a_power_and_a_factor, X3, 3)


def a_mode_and_a_flag_among_the_arguments(x, act, centre, scale=None):
    """Arguments with nothing to differentiate (a name, a flag, None) beside the numbers."""
    y = np.tanh(x) if act == "tanh" else np.sin(x)
    if centre:
        y = y - np.mean(y)
    return np.sum(y ** 2) * (1.0 if scale is None else scale)


_case(a_mode_and_a_flag_among_the_arguments, X3, "tanh", True, None)


X3_32, A33_32 = X3.astype(np.float32), A33.astype(np.float32)


def single_precision_layer(a, x):
    """float32 parameters and data, as networks are trained: every gradient stays float32 (the
    layer moves single-precision leaves in float64 for its central differences)."""
    h = np.tanh(a @ x + np.float32(0.1))
    return np.sum(h * np.exp(np.float32(0.3) * x)) + np.linalg.norm(a) * np.float32(0.01)


_case(single_precision_layer, A33_32, X3_32)


def single_precision_solve(a, x):
    """float32 through a linear solve and a vector result (seeded)."""
    return np.linalg.solve(a, x) * x[0]


_case(single_precision_solve, A33_32, X3_32)


class Layer:
    """A layer of a user's own type, registered (`register_structure`) with a name among its
    parts: walked as a dict is, its gradient a Layer."""

    def __init__(self, w, b, act="tanh"):
        self.w, self.b, self.act = w, b, act


register_structure(Layer, lambda l: {"w": l.w, "b": l.b, "act": l.act}, lambda parts: Layer(**parts))


def layers_of_a_registered_type(layers, x):
    for layer in layers:
        x = getattr(np, layer.act)(layer.w @ x + layer.b)
    return np.sum(x ** 2)


_case(layers_of_a_registered_type, [Layer(0.4 * W1[:2], B1[:2]), Layer(W2[:1, :2], B2[:1], "sin")], X3)


class Moments:
    """A result of a user's own registered type: seeded and packed by its parts."""

    def __init__(self, mean, spread):
        self.mean, self.spread = mean, spread


register_structure(Moments, lambda m: (m.mean, m.spread), lambda parts: Moments(*parts))


def a_result_of_a_registered_type(x):
    return Moments(np.sin(x) * x[0], np.sum(x ** 2))


_case(a_result_of_a_registered_type, X3)


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


_case(newton_sqrt, 2.0)


def piecewise_by_where(x):
    return np.sum(np.where(x > 0, np.sqrt(np.abs(x)) * x, x ** 2) + np.maximum(x, 0.1) + np.clip(x, -0.5, 0.5))


_case(piecewise_by_where, X3)


# --- closures and partial application ---


def _make_closure():
    w = np.array([1.5, -0.5, 0.25])

    def captured_weights(x):
        return np.sum(np.tanh(w * x) ** 2)
    return captured_weights


_case(_make_closure(), X3)


def _partial_case():
    import functools

    def loss(w, x, scale=1.0):
        return scale * np.sum(np.cos(w * x))
    f = functools.partial(loss, np.array([0.5, 1.5, -1.0]), scale=2.0)
    f.__name__ = "partial_of_weights"
    return f


_case(_partial_case(), X3, id="partial_of_weights")


# --- results of several values, and of size one ---


def size_one_result(x):
    return np.sum(x ** 2, keepdims=True)


_case(size_one_result, X3)


def tuple_result(x, y):
    return np.sum(x * y), np.sin(x) * y


_case(tuple_result, X3, Y3)


def dict_result(x):
    return {"loss": np.sum(x ** 2), "feature": np.exp(x[:2])}


_case(dict_result, X3)


# --- linear algebra, complex intermediates, scipy ---


def solve_and_quadratic_form(A, b):
    x = np.linalg.solve(A, b)
    return x @ A @ x + np.log(np.abs(np.linalg.det(A)))


_case(solve_and_quadratic_form, A33, X3)


def power_spectrum(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)


_case(power_spectrum, np.array([0.3, -0.1, 0.8, 0.5, -0.6]))


def softmax_cross_entropy(logits):
    from tapegrad.scipy.special import logsumexp  # (scipy's own converts its argument)
    return -np.sum(np.array([0.2, 0.5, 0.3]) * (logits - logsumexp(logits)))


_case(softmax_cross_entropy, X3)


def sort_and_gather(x):
    order = np.argsort(x)
    return np.sum(x[order] * np.arange(1.0, 4.0)) + np.sum(x[[0, 0, 2]] ** 2)


_case(sort_and_gather, X3)


def cumulative(x):
    return np.sum(np.cumsum(x) * np.diff(np.r_[0.0, x]))


_case(cumulative, X3)


# --- complex arguments (autograd's convention: the gradient of Re f pairs as Re Σ g·dz) ---

from tapegrad import ComplexValueError  # noqa: E402


def energy_of_a_complex_field(z):
    return np.sum(np.abs(z) ** 2 * np.real(z)) + np.real(np.sum(z * z))


_case(energy_of_a_complex_field, np.array([0.5 + 1.0j, -0.3 + 0.2j]), refuses={
    # a complex Jacobian exists for a holomorphic function only, and a Hessian of a real
    # function of complex values is no complex matrix: both refuse, naming what to do
    "jacobian_fwd": (ComplexValueError, "holomorphic=True"),
    "jacobian_rev": (ComplexValueError, "holomorphic=True"),
    **{f"hessian_{m}": (ComplexValueError, "use hvp") for m in ("rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd")},
})


def real_part_of_a_complex_number(z):
    return np.real(z) * 2.0 + np.imag(z)


_case(real_part_of_a_complex_number, 1.0 + 2.0j, refuses={
    "jacobian_fwd": (ComplexValueError, "holomorphic=True"),
    "jacobian_rev": (ComplexValueError, "holomorphic=True"),
    **{f"hessian_{m}": (ComplexValueError, "use hvp") for m in ("rev-rev", "fwd-rev", "rev-fwd", "fwd-fwd")},
})


def sinc_of_a_list(a, b):
    # numpy's sinc computes where(x, x, eps), a condition of numbers: the branch is x != 0
    return np.sum(np.sinc([a, b]) ** 2)


_case(sinc_of_a_list, 1.2, 0.3)


# --- a rule of the user's own whose pullback calls a pullback (a fixed point, autograd's way) ---

import tapegrad  # noqa: E402


def _babylon(x, a):
    return 0.5 * (x + a / x)


def fixed_point_sqrt(a):
    """sqrt(a) as the fixed point of x -> (x + a/x) / 2, iterated to convergence."""
    x = 1.0
    for _ in range(60):
        x = _babylon(x, a)
    return x


@tapegrad.rrule(fixed_point_sqrt)
def fixed_point_sqrt_rrule(a):
    """The implicit derivative: at x = g(x, a), the adjoint w solves w = dx + w g_x, and the
    cotangent of a is w g_a; both read off the pullback of one step g. At second order the
    cotangents are traced: the pullback of g is itself called with a traced seed."""
    x = fixed_point_sqrt(a)

    def fixed_point_sqrt_pullback(dx):
        _, back = tapegrad.pullback(_babylon, x, a)
        w = dx
        for _ in range(60):
            w = dx + back(w)[1]
        return tapegrad.NO_TANGENT, back(w)[2]

    return x, fixed_point_sqrt_pullback


def through_a_fixed_point(a):
    return fixed_point_sqrt(a * a + 1.0) * a


_case(through_a_fixed_point, 0.8)
