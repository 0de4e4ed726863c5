"""tapegrad.grad: the gradient context and the entry points grad, gradient and pullback."""
import gc
import weakref

import numpy as np
import pytest

import tapegrad
from tapegrad import grad, pullback, trace
from tapegrad.gradcontext import GradContext


def test_grad_context_is_reusable_as_trace_context():
    """trace with a GradContext records rrules, the first half of grad."""
    _, tape = trace(lambda x: np.sin(x), 1.0, ctx=GradContext())
    assert tapegrad.show.format_tape(tape, compact=True) == (
        "Tape\n"
        "  inp %1::function lambda\n"
        "  inp %2::float64   # x\n"
        "  %3, pb%3 = rrule(sin, %2)::float64"
    )


def test_grad_frees_its_tape_at_once_and_restores_the_collector():
    """grad's tape goes by reference counting while the collector is paused: nothing is left for
    the cyclic collector, and the collector is back on afterwards, also when f raises."""
    def chain(x, c):
        for _ in range(200):
            x = np.sin(x) * c + 0.1 * x
        return x

    gc.collect()
    assert gc.isenabled()
    grad(chain, 0.3, 1.0001)
    assert gc.isenabled()
    assert gc.collect() == 0  # no tape, op or Variable waited for the collector

    def fails(x):
        raise KeyError("inside f")

    with pytest.raises(KeyError):
        grad(fails, 1.0)
    assert gc.isenabled()


def _intermediate_is_freed_during_f(run):
    """Whether `run` (grad or pullback) lets go of an intermediate as soon as f drops it.
    Neither rule needs the intermediate's values: multiply keeps its inputs, sum its shape."""
    freed = []

    def f(x):
        a = x * 2.0
        ref = weakref.ref(a._val)
        s = np.sum(a)
        del a
        freed.append(ref() is None)
        return s

    value, grads = run(f, np.arange(4.0))
    assert value == 12.0 and np.array_equal(grads[1], np.full(4, 2.0))
    return freed[0]


def test_grad_keeps_only_the_shape_of_an_intermediate_no_pullback_needs():
    """grad's tape records a large array result as a stand-in and sum keeps a stand-in of its
    input, so the intermediate goes as soon as f drops it; pullback's tape, which the user can
    read, keeps it. (conftest.py makes every array "large".)"""
    assert _intermediate_is_freed_during_f(grad)

    def with_pullback(f, x):
        y, back = pullback(f, x)
        return y, back(1.0)

    assert not _intermediate_is_freed_during_f(with_pullback)


def _constant_is_freed_during_f(run):
    """Whether `run` lets go of a constant array that f made and passed to a primitive once f
    drops it. add keeps only its arguments' shapes, so nothing but a tape could hold it."""
    freed = []

    def f(x):
        c = np.arange(4.0) * 3.0  # made inside f, never traced
        ref = weakref.ref(c)
        s = np.sum(x + c)
        del c
        freed.append(ref() is None)
        return s

    value, grads = run(f, np.ones(4))
    assert value == 22.0 and np.array_equal(grads[1], np.ones(4))
    return freed[0]


def test_grad_keeps_only_the_shape_of_a_constant_argument():
    """grad's tape keeps a large constant argument of a primitive with a large result as a
    stand-in (only its Variables are read by the sweep), so a constant such as a distance
    matrix or np.eye(n) goes when f drops it, not after the sweep; pullback's tape, which the
    user can read and replay, keeps it."""
    assert _constant_is_freed_during_f(grad)

    def with_pullback(f, x):
        y, back = pullback(f, x)
        return y, back(1.0)

    assert not _constant_is_freed_during_f(with_pullback)


def ratio(a, b):
    return a / (a + b * b)


def test_gradient_is_grad_without_the_value_and_df():
    """gradient(f, ...) gives the derivatives with respect to the arguments alone, as grad and pullback give them."""
    value, grads = tapegrad.grad(ratio, 2.0, 3.0)
    assert (value, grads) == (2 / 11, (tapegrad.ZERO, pytest.approx(9 / 121), pytest.approx(-12 / 121)))
    assert tapegrad.gradient(ratio, 2.0, 3.0) == grads[1:]
    assert repr(pullback(ratio, 2.0, 3.0)[1]) == "<pullback of 'ratio' at 0.18181818181818182>"


def test_gradient_leaves_the_captured_values_plain():
    """gradient differentiates the arguments alone: the values f captures reach it as the
    plain arrays they are (grad traces them for df), and give the same derivatives."""
    data = np.array([1.0, 2.0, 3.0])
    seen = []

    def loss(w):
        seen.append(type(data))
        return np.sum(np.sin(w * data))

    assert tapegrad.gradient(loss, 0.5) == (pytest.approx(float(np.sum(data * np.cos(0.5 * data)))),)
    assert tapegrad.gradient(loss, 0.5) == tapegrad.grad(loss, 0.5)[1][1:]
    assert seen == [np.ndarray, np.ndarray, tapegrad.tracer.Tracer]  # (the third: grad's)


def test_gradient_of_a_solve_whose_output_times_are_captured():
    """An ODE's output times captured by the function (as a script defines them once): gradient
    leaves them plain, so solve_ivp does not refuse them as traced times. y' = -k y, y(0) = 2."""
    from tapegrad.scipy.integrate import solve_ivp
    times = np.array([0.5, 1.0])

    def final(k):
        return solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.array([2.0]), t_eval=times, rtol=1e-10,
                         atol=1e-12).y[0, -1]

    assert tapegrad.gradient(final, 0.5)[0] == pytest.approx(-2 * np.exp(-0.5), rel=1e-7)


def test_a_seed_makes_the_gradient_a_vector_jacobian_product():
    """For an array result the seed weighs each entry: here d(x²)·seed = 2x·seed."""
    value, (_, dx) = grad(lambda x: x * x, np.array([1.0, 2.0]), seed=np.array([1.0, 10.0]))
    assert value.tolist() == [1.0, 4.0] and dx.tolist() == [2.0, 40.0]


def test_pullback_runs_again_with_another_seed_and_keeps_the_last_backward_program():
    """Each call of back replaces the backward part of the tape: the tape has the same length after each."""
    y, back = pullback(lambda x: np.sin(x) * 2.0, 0.5)
    assert back(1.0)[1] == 2.0 * np.cos(0.5)
    n = len(back.tape)
    assert back(3.0)[1] == 6.0 * np.cos(0.5) and len(back.tape) == n


def test_a_grad_context_subclass_that_records_its_own_way_is_asked_about_every_primitive():
    """A GradContext subclass overriding record_primitive sees every primitive (the rule path
    that skips the base context's decision is for GradContext itself)."""
    seen = []

    class Logging(GradContext):
        def record_primitive(self, tape, fn, *args, **kwargs):
            seen.append(fn.__name__)
            return super().record_primitive(tape, fn, *args, **kwargs)

    value, _ = tapegrad.trace(lambda x: np.sin(x) * x, 0.5, ctx=Logging())
    assert seen == ["sin", "multiply"] and value == np.sin(0.5) * 0.5


# --- complex values: autograd's convention (the README's "Complex numbers") ---


def test_gradient_of_a_real_function_of_a_complex_argument_follows_autograd():
    """The gradient w.r.t. z of a real f is ∂f/∂Re z − i ∂f/∂Im z: |z|² at 1+2j gives 2−4j
    (autograd's tutorial), through every entry point, with the argument's type."""
    f = lambda z: np.abs(z) ** 2  # noqa: E731
    value, (df, dz) = grad(f, 1 + 2j)
    assert (value, df, dz) == (pytest.approx(5.0), tapegrad.ZeroTangent(), pytest.approx(2 - 4j))
    assert tapegrad.gradient(f, 1 + 2j) == (pytest.approx(2 - 4j),)
    assert pullback(f, 1 + 2j)[1]()[1] == pytest.approx(2 - 4j)
    g = tapegrad.gradient(lambda z: np.sum(np.real(z * np.conj(z))), np.array([1 + 2j, -3j]))[0]
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g, [2 - 4j, 6j])


def test_gradient_w_r_t_complex_and_real_arguments_together():
    """f = x²|z|²: d/dx = 2x|z|² (a real float) and, for z, x²(2 Re z − 2i Im z)."""
    dx, dz = tapegrad.gradient(lambda x, z: x ** 2 * np.real(z * np.conj(z)), 2.0, 1 + 1j)
    assert type(dx) is float or np.ndim(dx) == 0 and not np.iscomplexobj(dx)
    assert dx == pytest.approx(8.0) and dz == pytest.approx(8 - 8j)


@pytest.mark.parametrize("seed", [1.0, 1.0 + 0j, -1j, 0.5 + 2j])
def test_seed_of_a_holomorphic_function_gives_seed_times_its_derivative(seed):
    """Seed s on a complex result: the gradient of Re(s·f); for a holomorphic f that is s·f'(z)
    (seed 1 is autograd's holomorphic_grad, -1j the gradient of Im f)."""
    z = 0.3 + 0.8j
    for f, fprime in [(np.sin, np.cos(z)), (lambda z: z ** 3 / (1 + z), (2 * z ** 3 + 3 * z ** 2) / (1 + z) ** 2),
                      (lambda z: np.exp(z) * np.log(z), np.exp(z) * (np.log(z) + 1 / z))]:
        _, (_, d) = grad(f, z, seed=seed)
        assert d == pytest.approx(seed * fprime)


def test_complex_seed_of_a_complex_array_result_is_a_vector_jacobian_product():
    z = np.array([1 + 1j, 0.5 - 2j])
    g = np.array([0.3 - 1j, 2j])
    y, back = pullback(np.exp, z)
    np.testing.assert_allclose(back(g)[1], g * np.exp(z))
    np.testing.assert_allclose(grad(np.exp, z, seed=g)[1][1], g * np.exp(z))
    # a real result of a real argument through complex values: a real gradient
    x = np.array([0.3, -0.4])
    _, (_, dx) = grad(lambda x: np.exp(1j * x), x, seed=g)
    assert dx.dtype == np.float64
    np.testing.assert_allclose(dx, np.real(g * 1j * np.exp(1j * x)))


def test_complex_scalar_result_without_a_seed_is_refused_saying_what_to_pass():
    """As autograd and JAX (unless told the function is holomorphic): which real number the
    gradient is of is the caller's choice."""
    with pytest.raises(tapegrad.SeedError, match=r"^<lambda> returned complex128, a complex number, so the "
                       r"gradient taken at test_grad\.py:\d+ needs a seed: pass seed=1\.0 for the gradient "
                       r"of its real part \(for a holomorphic <lambda>, its derivative f'\(z\), as "
                       r"autograd's holomorphic_grad\), seed=-1j for that of its imaginary part, or return "
                       r"a real number such as np\.abs\(\.\.\.\) \*\* 2$"):
        grad(lambda z: z * z, 1 + 2j)
    with pytest.raises(tapegrad.SeedError):
        pullback(lambda x: np.exp(1j * x), 1.0)[1]()


def test_real_argument_with_complex_intermediates_gets_a_real_gradient():
    """d/dt Re e^{it} = -sin t, a float; in a structure too, and in a compiled gradient."""
    _, (_, d) = grad(lambda t: np.real(np.exp(1j * t)), 0.3)
    assert d == pytest.approx(-np.sin(0.3)) and not np.iscomplexobj(d)
    params = {"z": np.array([1 + 2j, 3 - 1j]), "x": np.array([0.5, 2.0])}
    g = tapegrad.gradient(lambda p: np.sum(np.abs(p["z"] * p["x"]) ** 2), params)[0]
    assert g["x"].dtype == np.float64 and g["z"].dtype == np.complex128
    np.testing.assert_allclose(g["x"], 2 * params["x"] * np.abs(params["z"]) ** 2)
    np.testing.assert_allclose(g["z"], 2 * params["x"] ** 2 * np.conj(params["z"]))
    cg = tapegrad.compiled_grad(lambda x, z: np.sum(np.abs(x * z) ** 2))
    for _ in range(2):
        _, (_, gx, gz) = cg(params["x"], params["z"])
        np.testing.assert_allclose(gx, g["x"])
        np.testing.assert_allclose(gz, g["z"])


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_casts_between_real_and_complex_follow_numpy():
    """x.astype(complex), np.astype(x, complex) and x + 0j make the same complex value, and x
    gets the real part of its cotangent; astype(float) of a complex z drops the imaginary part
    as numpy does (with its ComplexWarning), so z's cotangent is the real cotangent."""
    x = np.array([0.5, -1.5])
    w = np.array([1 + 2j, 0.5 - 1j])
    want = 2 * x * np.abs(w) ** 2
    for cast in (lambda x: x.astype(complex), lambda x: np.astype(x, np.complex128), lambda x: x + 0j):
        g = tapegrad.gradient(lambda x: np.sum(np.abs(cast(x) * w) ** 2), x)[0]
        assert g.dtype == np.float64
        np.testing.assert_allclose(g, want)
    z = np.array([1 + 2j, -3 + 0.5j])
    g = tapegrad.gradient(lambda z: np.sum(z.astype(np.float64) ** 2), z)[0]
    assert g.dtype == np.complex128
    np.testing.assert_array_equal(g, 2 * np.real(z))
